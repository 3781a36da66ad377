//go:build !unix

package mcp

import (
	"os"
	"os/exec"
)

func ownGroup(*exec.Cmd) {}

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}
