// Command attacker is what the sandbox tests run inside the sandbox: it
// tries the attack its first argument names and prints what happened.
package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Println("attacker ATTACK [ARGS]")
		return
	}
	attack(os.Args[1], os.Args[2:])
}

func attack(name string, args []string) {
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch name {
	case "whoami":
		status, _ := os.ReadFile("/proc/self/status")
		for l := range strings.SplitSeq(string(status), "\n") {
			if strings.HasPrefix(l, "CapEff:") || strings.HasPrefix(l, "Uid:") {
				fmt.Println(strings.Join(strings.Fields(l), " "))
			}
		}
	case "remount":
		for _, m := range []struct {
			src, target, fs string
			flags           uintptr
		}{
			{"", "/", "", unix.MS_REMOUNT | unix.MS_BIND},
			{"", arg(0), "", unix.MS_REMOUNT | unix.MS_BIND},
			{"", arg(0), "", unix.MS_REMOUNT},
			{"none", arg(0), "tmpfs", 0},
			{"/", arg(0), "", unix.MS_BIND},
		} {
			err := unix.Mount(m.src, m.target, m.fs, m.flags, "")
			fmt.Printf("mount %s %s: %v\n", m.fs, m.target, errText(err))
		}
		err := os.WriteFile(filepath.Join(arg(0), "remounted"), []byte("x"), 0o644)
		fmt.Printf("write after remount: %v\n", errText(err))
	case "userns":
		runtime.LockOSThread()
		fmt.Printf("unshare user: %v\n", errText(unix.Unshare(unix.CLONE_NEWUSER)))
		fmt.Printf("unshare mount: %v\n", errText(unix.Unshare(unix.CLONE_NEWNS)))
	case "read":
		b, err := os.ReadFile(arg(0))
		if err != nil {
			fmt.Printf("read: %v\n", errText(err))
		} else {
			fmt.Printf("read: %s\n", b)
		}
	case "list":
		names, err := os.ReadDir(arg(0))
		fmt.Printf("list: %d entries, %v\n", len(names), errText(err))
	case "write":
		fmt.Printf("write: %v\n", errText(os.WriteFile(arg(0), []byte("written from the sandbox"), 0o644)))
	case "dial":
		c, err := net.Dial("unix", arg(0))
		if err == nil {
			c.Close()
		}
		fmt.Printf("dial: %v\n", errText(err))
	case "alloc":
		n, _ := strconv.Atoi(arg(0))
		b := make([]byte, n)
		for i := 0; i < n; i += 4096 {
			b[i] = 1
		}
		fmt.Printf("alloc: %d bytes\n", len(b))
	case "fsize":
		n, _ := strconv.Atoi(arg(1))
		f, err := os.Create(arg(0))
		if err == nil {
			_, err = f.Write(make([]byte, n))
			f.Close()
		}
		fmt.Printf("fsize: %v\n", errText(err))
	case "fork":
		n, _ := strconv.Atoi(arg(0))
		started := 0
		var err error
		var cmds []*exec.Cmd
		for range n {
			c := exec.Command("/proc/self/exe", "sleep")
			if err = c.Start(); err != nil {
				break
			}
			cmds = append(cmds, c)
			started++
		}
		fmt.Printf("fork: started %d of %d: %v\n", started, n, errText(err))
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	case "sleep":
		time.Sleep(time.Hour)
	case "flood":
		n, _ := strconv.ParseInt(arg(0), 10, 64)
		chunk := []byte(strings.Repeat("flood of output\n", 1<<16))
		for ; n > 0; n -= int64(len(chunk)) {
			os.Stdout.Write(chunk[:min(n, int64(len(chunk)))])
		}
	default:
		fmt.Printf("no attack %q\n", name)
	}
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
