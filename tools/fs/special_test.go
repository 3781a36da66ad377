package fs

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptkit/ptk"
)

// bounded runs a tool with a deadline of a second and fails the test if the
// call has not returned two seconds later: a call blocked in open(2) on a
// FIFO is deaf to its context, and must fail the test, not hang it.
func bounded(t *testing.T, w *Workspace, tool string, a any) (ptk.Result, error) {
	t.Helper()
	raw, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	tl, ok := w.Tool(tool)
	if !ok {
		t.Fatalf("no tool %q", tool)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	type out struct {
		res ptk.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := tl.Run(ctx, raw)
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(3 * time.Second):
		t.Fatalf("%s(%s) hung past its deadline", tool, raw)
		return ptk.Result{}, nil
	}
}

// mkfifo makes a FIFO at p, and on cleanup opens and closes it, to release
// any call the test left blocked in open(2) on it.
func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(p, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFIFOIgnoreFile puts a FIFO where an ignore file is read: listings and
// searches used to block in open(2) for ever. The FIFO counts as no ignore
// file.
func TestFIFOIgnoreFile(t *testing.T) {
	for _, place := range []string{".gitignore", ".ptkignore", "sub/.gitignore", "sub/.ptkignore", ".git/info/exclude"} {
		t.Run(place, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"sub/a.txt": "needle\n", "b.txt": "needle\n", ".git/HEAD": "x\n"})
			mkfifo(t, filepath.Join(dir, place))
			w := open(t, dir)
			for _, c := range []struct {
				tool string
				args args
				has  string
			}{
				{"list_dir", args{}, "sub/"},
				{"list_dir", args{"path": "sub"}, "a.txt"},
				{"glob", args{"pattern": "**/*.txt"}, "sub/a.txt"},
				{"grep", args{"pattern": "needle"}, "sub/a.txt:1: needle"},
				{"grep", args{"pattern": "needle", "path": "sub"}, "sub/a.txt:1: needle"},
			} {
				res, err := bounded(t, w, c.tool, c.args)
				if err != nil || res.IsError || !strings.Contains(res.Content, c.has) {
					t.Errorf("%s(%v) = %q, %v; want a result with %q", c.tool, c.args, res.Content, err, c.has)
				}
			}
		})
	}
}

// TestSpecialFiles calls every tool on a FIFO, a socket and (as root) a
// character device: each is refused with an error result that says what
// it is, listings show them, and searches skip them; nothing blocks.
func TestSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "needle\n"})
	mkfifo(t, filepath.Join(dir, "pipe"))
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Skipf("unix socket: %v", err)
	}
	defer l.Close()
	special := map[string]string{"pipe": "a named pipe (FIFO)", "sock": "a socket"}
	// /dev/null's numbers; making a device needs root.
	if err := syscall.Mknod(filepath.Join(dir, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		special["null"] = "a character device"
	}
	w := open(t, dir)
	for name, what := range special {
		for _, c := range []struct {
			tool string
			args args
		}{
			{"read_file", args{"path": name}},
			{"grep", args{"pattern": "x", "path": name}},
			{"write_file", args{"path": name, "content": "x"}},
			{"edit_file", args{"path": name, "old_string": "a", "new_string": "b"}},
		} {
			res, err := bounded(t, w, c.tool, c.args)
			if err != nil || !res.IsError || !strings.Contains(res.Content, "is not a regular file but "+what) {
				t.Errorf("%s(%s) = %q, %v; want a refusal that says it is %s", c.tool, name, res.Content, err, what)
			}
		}
		if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil || fi.Mode().IsRegular() {
			t.Errorf("%s was replaced: %v", name, err)
		}
	}
	res, err := bounded(t, w, "list_dir", args{})
	if err != nil || !strings.Contains(res.Content, "pipe|\n") || !strings.Contains(res.Content, "sock=") {
		t.Errorf("list_dir = %q, %v; want pipe| and sock=", res.Content, err)
	}
	res, err = bounded(t, w, "grep", args{"pattern": "needle"})
	if err != nil || res.Content != "a.txt:1: needle" {
		t.Errorf("grep = %q, %v", res.Content, err)
	}
	for _, name := range []string{"pipe/x", "sock/x"} {
		if res, err := bounded(t, w, "list_dir", args{"path": name}); err != nil || !res.IsError {
			t.Errorf("list_dir(%s) = %q, %v", name, res.Content, err)
		}
	}
}

// TestWriteWaitsWithContext holds the workspace's write lock, as a write
// stuck in a blocking call used to: a write waiting for its turn must give
// up when its context ends, not wait for ever.
func TestWriteWaitsWithContext(t *testing.T) {
	w := open(t, t.TempDir())
	w.lock <- struct{}{}
	held := true
	t.Cleanup(func() { // before Close, which takes the lock
		if held {
			<-w.lock
		}
	})
	for _, c := range []struct {
		tool string
		args args
	}{
		{"write_file", args{"path": "a.txt", "content": "x"}},
		{"edit_file", args{"path": "a.txt", "old_string": "x", "new_string": "y"}},
	} {
		if _, err := bounded(t, w, c.tool, c.args); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s while a write holds the lock: %v, want context.DeadlineExceeded", c.tool, err)
		}
	}
	<-w.lock
	held = false
	if res, err := bounded(t, w, "write_file", args{"path": "a.txt", "content": "x"}); err != nil || res.IsError {
		t.Errorf("write_file after the lock is free: %q, %v", res.Content, err)
	}
}

// TestNewOnFIFO opens a FIFO as the workspace: New must fail at once, not
// block in open(2).
func TestNewOnFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ws")
	mkfifo(t, p)
	done := make(chan error, 1)
	go func() {
		w, err := New(p)
		if err == nil {
			w.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("New(a FIFO) succeeded")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("New(a FIFO) hung")
	}
}
