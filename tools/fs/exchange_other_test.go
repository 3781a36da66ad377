//go:build !linux

package fs

import "syscall"

// renameExchange is Linux's renameat2(RENAME_EXCHANGE); elsewhere the race
// test that needs it is skipped.
func renameExchange(a, b string) error { return syscall.ENOSYS }
