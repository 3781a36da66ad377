//go:build linux

package sandbox

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// BenchmarkRun is the cost of a run: the helper and bubblewrap in front of
// /bin/true, against the helper alone (unconfined) and true alone.
func BenchmarkRun(b *testing.B) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Skip(err)
	}
	ctx := context.Background()
	confined, err := New(Config{System: true, Tmpfs: []string{"/tmp"}, Limits: Limits{Memory: 1 << 30, FileSize: 1 << 30}})
	if err != nil {
		b.Fatal(err)
	}
	asNobody, err := New(Config{System: true, Tmpfs: []string{"/tmp"}, DropRoot: true, Limits: Limits{Memory: 1 << 30, Processes: 64}})
	if err != nil {
		b.Fatal(err)
	}
	unconfined := Unconfined(Config{Limits: Limits{Memory: 1 << 30}})
	for _, c := range []struct {
		name string
		s    *Sandbox
	}{{"bubblewrap", confined}, {"bubblewrap-as-nobody", asNobody}, {"helper-only", unconfined}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if r := c.s.Run(ctx, time.Minute, 4096, nil, "/bin/true"); r.Err != nil {
					b.Fatal(r.Err, r.Output)
				}
			}
		})
	}
	// What the shell's --sandbox ran before this package: / bound
	// read-only, no user namespace.
	b.Run("bwrap-root-read-only-before", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
				"--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session", "--", "/bin/true")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatal(err, string(out))
			}
		}
	})
	b.Run("exec", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
