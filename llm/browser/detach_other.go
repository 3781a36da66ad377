//go:build !unix

package browser

import "os/exec"

// detach leaves cmd as it is: the browser outlives this process already.
func detach(*exec.Cmd) {}
