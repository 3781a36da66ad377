package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ptkit/ptk"
)

// raceCalls is how many calls a race loop makes: a few thousand by
// default, so that CI runs it in seconds; PTK_RACE_CALLS sets more for a
// longer run.
func raceCalls(t *testing.T, def int) int {
	if s := os.Getenv("PTK_RACE_CALLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("PTK_RACE_CALLS: %v", err)
		}
		return n
	}
	if testing.Short() {
		return def / 10
	}
	return def
}

// swapper runs swap over and over in a goroutine until stop is called, or
// the test ends, and counts the swaps.
func swapper(t *testing.T, swap func(i int)) (stop func() int) {
	var done atomic.Bool
	var n atomic.Int64
	end := make(chan struct{})
	go func() {
		defer close(end)
		for i := 0; !done.Load(); i++ {
			swap(i)
			n.Add(1)
		}
	}()
	stop = func() int {
		done.Store(true)
		<-end
		return int(n.Load())
	}
	t.Cleanup(func() { stop() })
	return stop
}

// raceResult runs one call of a race loop with bounded: a Go error other
// than running out of time (a slow disk under a loaded machine) fails the
// test. It reports whether the call was refused or timed out.
func raceResult(t *testing.T, w *Workspace, tool string, a args) (res ptk.Result, ok bool) {
	t.Helper()
	res, err := bounded(t, w, tool, a)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return res, false
	case err != nil:
		t.Fatalf("%s(%v): Go error %v", tool, a, err)
	}
	return res, !res.IsError
}

// TestFIFOSwapRace swaps a file between a regular file and a FIFO, and a
// folder between a directory and a FIFO, while the tools read, search, list
// and write them: a FIFO put in place between a check by name and the open
// used to hang read_file, grep and write_file (2 in ~2,000-7,000 calls
// each), and the hung write held the workspace's write lock. Every call
// must return before its deadline; a refusal is fine.
func TestFIFOSwapRace(t *testing.T) {
	base := t.TempDir()
	ws, stage := filepath.Join(base, "ws"), filepath.Join(base, "stage")
	writeFiles(t, ws, map[string]string{"x.txt": "needle one\n", "d/f.txt": "needle two\n"})
	if err := os.Mkdir(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	x, d := filepath.Join(ws, "x.txt"), filepath.Join(ws, "d")
	stop := swapper(t, func(i int) {
		tmp := filepath.Join(stage, fmt.Sprint(i))
		if i%2 == 0 {
			if syscall.Mkfifo(tmp, 0o644) == nil {
				os.Rename(tmp, x)
			}
			os.RemoveAll(d)
			syscall.Mkfifo(d, 0o644)
		} else {
			os.WriteFile(tmp, []byte("needle three\n"), 0o644)
			os.Rename(tmp, x)
			os.Remove(d)
			os.Mkdir(d, 0o755)
			os.WriteFile(filepath.Join(d, "f.txt"), []byte("needle four\n"), 0o644)
		}
	})
	w := open(t, ws)
	calls := []struct {
		tool string
		args args
	}{
		{"read_file", args{"path": "x.txt"}},
		{"grep", args{"pattern": "needle", "path": "x.txt"}},
		{"grep", args{"pattern": "needle"}},
		{"write_file", args{"path": "x.txt", "content": "needle five\n"}},
		{"edit_file", args{"path": "x.txt", "old_string": "needle", "new_string": "needle"}},
		{"list_dir", args{"path": "d"}},
		{"glob", args{"pattern": "d/*"}},
		{"grep", args{"pattern": "needle", "path": "d"}},
		{"write_file", args{"path": "d/new.txt", "content": "needle six\n"}},
	}
	n, errs := raceCalls(t, 3000), 0
	for i := range n {
		c := calls[i%len(calls)]
		if _, ok := raceResult(t, w, c.tool, c.args); !ok {
			errs++
		}
	}
	swaps := stop()
	t.Logf("%d calls (%d refused), %d swaps", n, errs, swaps)
}

// TestGitSwapRace swaps gd between a directory and a symbolic link to
// .git/hooks, atomically, while write_file and edit_file write files in gd:
// the check of the path used to see the directory and the write to go
// through the link (143 hooks created in 66,438 calls). Nothing may be
// written inside .git.
func TestGitSwapRace(t *testing.T) {
	base := t.TempDir()
	ws, stage := filepath.Join(base, "ws"), filepath.Join(base, "stage")
	hook := "#!/bin/sh\nexit 0\n"
	writeFiles(t, ws, map[string]string{".git/hooks/pre-push": hook, "gd/pre-push": hook})
	if err := os.Mkdir(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, ".git/hooks", filepath.Join(stage, "gd"))
	gd, other := filepath.Join(ws, "gd"), filepath.Join(stage, "gd")
	if err := renameExchange(gd, other); err != nil {
		t.Skipf("renameat2(RENAME_EXCHANGE): %v", err)
	}
	hooks := filepath.Join(ws, ".git", "hooks")
	before, err := os.Stat(filepath.Join(hooks, "pre-push"))
	if err != nil {
		t.Fatal(err)
	}
	stop := swapper(t, func(i int) {
		renameExchange(gd, other)
		// Hold each state for 0, 20 or 40 µs: every call lands on a swap
		// at a different point of its path walk, and some see no swap.
		time.Sleep(time.Duration(i%3) * 20 * time.Microsecond)
	})
	w := open(t, ws)
	calls := []struct {
		tool string
		args args
	}{
		{"write_file", args{"path": "gd/pre-push", "content": hook}},
		{"edit_file", args{"path": "gd/pre-push", "old_string": "exit 0", "new_string": "exit 1"}},
		{"write_file", args{"path": "gd/post-checkout", "content": hook}},
	}
	n, wrote, refused := raceCalls(t, 3000), 0, 0
	for i := range n {
		c := calls[i%len(calls)]
		res, ok := raceResult(t, w, c.tool, c.args)
		switch {
		case ok:
			wrote++
		case strings.Contains(res.Content, "inside a .git directory"):
			refused++
		}
	}
	swaps := stop()
	t.Logf("%d calls (%d wrote, %d refused for .git), %d swaps", n, wrote, refused, swaps)
	entries, err := os.ReadDir(hooks)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "pre-push" {
			t.Errorf("written inside .git: .git/hooks/%s", e.Name())
		}
	}
	after, err := os.Stat(filepath.Join(hooks, "pre-push"))
	if err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf(".git/hooks/pre-push was replaced or written")
	}
	if wrote == 0 || refused == 0 {
		t.Error("the loop never saw both a directory and a link")
	}
}
