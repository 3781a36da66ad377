package fs

import (
	"runtime"
	"syscall"
	"unsafe"
)

// renameat2's number, by architecture; 0 where this test does not know it.
var sysRenameat2 = map[string]uintptr{"amd64": 316, "arm64": 276, "riscv64": 276, "386": 353, "arm": 382, "ppc64le": 357, "s390x": 347}[runtime.GOARCH]

// renameExchange swaps the files at a and b atomically
// (renameat2(RENAME_EXCHANGE), Linux 3.15): neither path is ever missing.
func renameExchange(a, b string) error {
	if sysRenameat2 == 0 {
		return syscall.ENOSYS
	}
	pa, err := syscall.BytePtrFromString(a)
	if err != nil {
		return err
	}
	pb, err := syscall.BytePtrFromString(b)
	if err != nil {
		return err
	}
	const atFDCWD, renameExchange = ^uintptr(99), 2 // AT_FDCWD is -100
	_, _, e := syscall.Syscall6(sysRenameat2, atFDCWD, uintptr(unsafe.Pointer(pa)), atFDCWD, uintptr(unsafe.Pointer(pb)), renameExchange, 0)
	if e != 0 {
		return e
	}
	return nil
}
