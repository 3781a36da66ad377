//go:build !linux

package rofs

import "os/exec"

func isolate(*exec.Cmd) {}

func remount(string) error { return ErrUnsupported }
