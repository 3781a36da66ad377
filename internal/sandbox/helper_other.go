//go:build !linux

package sandbox

import "syscall"

const helperSupported = false

const (
	helperFlag  = "--ptk-sandbox-helper"
	helperEnv   = "PTK_SANDBOX_HELPER"
	helperValue = "v1"
)

func credential(uid int) *syscall.Credential { return nil }
