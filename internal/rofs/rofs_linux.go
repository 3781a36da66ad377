package rofs

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func isolate(cmd *exec.Cmd) {
	attr := &syscall.SysProcAttr{}
	if os.Getuid() == 0 {
		// Go makes the new namespace's mounts private before it runs the
		// program, so that the mount below stays in it.
		attr.Unshareflags = syscall.CLONE_NEWNS
	} else {
		attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	cmd.SysProcAttr = attr
}

func remount(dir string) error {
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind-mounting %s: %w", dir, err)
	}
	if err := syscall.Mount("", dir, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("making %s read-only: %w", dir, err)
	}
	return nil
}
