package shell

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// marked returns the processes whose environment holds mark, from /proc.
func marked(mark string) []int {
	var pids []int
	names, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, name := range names {
		env, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		if bytes.Contains(env, []byte("\x00"+mark+"\x00")) || bytes.HasPrefix(env, []byte(mark+"\x00")) {
			pid, _ := strconv.Atoi(strings.Split(name, "/")[2])
			pids = append(pids, pid)
		}
	}
	return pids
}

var markSeq atomic.Int64

// Nothing a command starts outlives its call: not after setsid, a double
// fork or nohup, not when it ignores SIGTERM, is stopped or has closed its
// output; whether the command ends by itself or times out.
func TestNothingOutlivesTheCall(t *testing.T) {
	t.Parallel()
	sh, _ := newShell(t)
	escapes := []struct{ name, command string }{
		{"setsid", `setsid sleep 1000 &`},
		{"setsid -f", `setsid -f sleep 1000`},
		{"double fork", `( sleep 1000 & ) &`},
		{"double fork and setsid", `( setsid sleep 1000 & ); sleep 0.05`},
		{"nohup", `nohup sleep 1000 >/dev/null 2>&1 &`},
		{"nohup setsid", `nohup setsid sleep 1000 >/dev/null 2>&1 &`},
		{"deaf to SIGTERM", `setsid sh -c 'trap "" TERM HUP INT; sleep 1000 & wait' &`},
		{"daemon", `setsid sh -c 'exec </dev/null >/dev/null 2>&1; sleep 1000' &`},
		{"forks on", `setsid sh -c 'while :; do sleep 1000 & sleep 0.01; done' >/dev/null 2>&1 &`},
		{"stopped", `setsid sh -c 'sleep 1000 & kill -STOP $$' &`},
		{"disowned", `sleep 1000 & disown`},
	}
	for _, e := range escapes {
		for _, timeout := range []bool{false, true} {
			name := e.name
			if timeout {
				name += ", timed out"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				mark := fmt.Sprintf("PTK_TEST_MARK=%d.%d", os.Getpid(), markSeq.Add(1))
				command := "export " + mark + "\n" + e.command + "\nsleep 0.2; echo started"
				args := command
				// Limits with room for a loaded machine: what is measured is
				// that the call returns at all, not how fast.
				limit := termGrace + 3*time.Second
				if timeout {
					command += "\nsleep 30"
					limit = 1500*time.Millisecond + termGrace + 3*time.Second
				}
				start := time.Now()
				if timeout {
					args = `{"command": ` + strconv.Quote(command) + `, "timeout": 1.5}`
				} else {
					args = `{"command": ` + strconv.Quote(command) + `}`
				}
				res := run(t, sh, args)
				d := time.Since(start)
				if !strings.HasPrefix(res.Content, "started\n") || res.IsError != timeout {
					t.Errorf("got %q (error %v)", res.Content, res.IsError)
				}
				if d > limit {
					t.Errorf("returned after %v, more than %v", d, limit)
				}
				if pids := marked(mark); len(pids) > 0 {
					for _, pid := range pids {
						syscall.Kill(pid, syscall.SIGKILL)
					}
					t.Errorf("%d processes outlived the call: %v", len(pids), pids)
				}
			})
		}
	}
}

// When the program dies (SIGKILL, nothing of it runs again), the reaper
// kills what its command started.
func TestProgramDies(t *testing.T) {
	t.Parallel()
	if mark := os.Getenv("PTK_TEST_PROGRAM_DIES"); mark != "" {
		sh, err := New(os.TempDir())
		if err != nil {
			os.Exit(1)
		}
		run(t, sh, command("export "+mark+"\nsetsid sleep 1000 &\nsleep 1000"))
		return
	}
	mark := fmt.Sprintf("PTK_TEST_MARK=%d.dies", os.Getpid())
	cmd := exec.Command(os.Args[0], "-test.run=^TestProgramDies$")
	cmd.Env = append(os.Environ(), "PTK_TEST_PROGRAM_DIES="+mark)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); len(marked(mark)) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the command did not start: %v", marked(mark))
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	for deadline := time.Now().Add(2 * time.Second); len(marked(mark)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			pids := marked(mark)
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("%d processes outlived the program: %v", len(pids), pids)
		}
	}
}

// A command that kills the reaper gets an error result, and what is left in
// the reaper's process group is killed. (What it started in another session
// is then beyond reach: a process of the user can always kill a
// supervisor of the same user; only the sandbox is a wall.)
func TestReaperKilled(t *testing.T) {
	t.Parallel()
	sh, ws := newShell(t)
	start := time.Now()
	res := run(t, sh, command("sleep 300 & echo $! > pid; kill -9 $PPID; sleep 300"))
	if d := time.Since(start); d > drainDelay+time.Second {
		t.Errorf("returned after %v", d)
	}
	if !res.IsError || !strings.Contains(res.Content, "the process reaper failed") {
		t.Errorf("got %q (error %v)", res.Content, res.IsError)
	}
	waitGone(t, filepath.Join(ws, "pid"))
}
