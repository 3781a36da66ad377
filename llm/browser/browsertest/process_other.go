//go:build !unix

package browsertest

import "os/exec"

func ownGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		cmd.Process.Kill()
	}
}

// KillProfile does nothing here: the tests that start browsers run on
// Linux.
func KillProfile(string) {}
