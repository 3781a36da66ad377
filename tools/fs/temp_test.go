package fs

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTempFiles leaves temporary files of writes in a folder, as a process
// killed mid-write does: listings and searches never show them, and the
// next write in that folder removes those older than staleTemp, not the
// fresh ones (a write in progress elsewhere) nor those of other folders.
func TestTempFiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"sub/a.txt":                    "needle\n",
		"sub/.a.txt.ptk-tmp-0000beef":  "stale needle\n",
		"sub/.b.txt.ptk-tmp-0000cafe":  "fresh needle\n",
		".top.txt.ptk-tmp-00000001":    "stale needle\n",
		"sub/.a.txt.ptk-tmp-notmine00": "a user's file\n",
	})
	old := time.Now().Add(-staleTemp - time.Minute)
	for _, name := range []string{"sub/.a.txt.ptk-tmp-0000beef", ".top.txt.ptk-tmp-00000001", "sub/.a.txt.ptk-tmp-notmine00"} {
		if err := os.Chtimes(filepath.Join(dir, name), old, old); err != nil {
			t.Fatal(err)
		}
	}
	w := open(t, dir)
	for _, c := range []toolCase{
		{name: "list_dir", args: args{"path": "sub"}, want: ".a.txt.ptk-tmp-notmine00\na.txt"},
		{name: "glob", args: args{"pattern": "**"}, want: "sub/.a.txt.ptk-tmp-notmine00\nsub/a.txt"},
		{name: "grep", args: args{"pattern": "needle"}, want: "sub/a.txt:1: needle"},
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t, run(t, w, c.name, c.args)) })
	}
	if res := run(t, w, "write_file", args{"path": "sub/c.txt", "content": "new\n"}); res.IsError {
		t.Fatal(res.Content)
	}
	for name, want := range map[string]bool{
		"sub/.a.txt.ptk-tmp-0000beef":  false,
		"sub/.b.txt.ptk-tmp-0000cafe":  true,
		".top.txt.ptk-tmp-00000001":    true,
		"sub/.a.txt.ptk-tmp-notmine00": true,
	} {
		if _, err := os.Lstat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", name, err == nil, want)
		}
	}
}

// TestKilledWrites kills a process with -9 while it writes 4 MB files with
// write_file, five times: the file it writes is always whole, and once the
// temporary files it left are stale, one write in the folder removes them.
func TestKilledWrites(t *testing.T) {
	if dir := os.Getenv("PTK_FS_WRITER"); dir != "" {
		writer(dir) // the child: writes until killed
		return
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	big := strings.Repeat("x", 4<<20)
	writeFiles(t, dir, map[string]string{"f.txt": big})
	left := 0
	for range 5 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWrites$")
		cmd.Env = append(os.Environ(), "PTK_FS_WRITER="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if got := read(t, dir, "f.txt"); got != big {
			t.Fatalf("f.txt is %d bytes after a kill, want %d", len(got), len(big))
		}
	}
	old := time.Now().Add(-staleTemp - time.Minute)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if isTemp(e.Name()) {
			left++
			os.Chtimes(filepath.Join(dir, e.Name()), old, old)
		}
	}
	t.Logf("%d temporary files left by 5 kills", left)
	w := open(t, dir)
	if res := run(t, w, "write_file", args{"path": "g.txt", "content": "x"}); res.IsError {
		t.Fatal(res.Content)
	}
	entries, _ = os.ReadDir(dir)
	for _, e := range entries {
		if isTemp(e.Name()) {
			t.Errorf("stale temporary file not removed: %s", e.Name())
		}
	}
}

// writer writes f.txt under dir over and over, for TestKilledWrites.
func writer(dir string) {
	w, err := New(dir)
	if err != nil {
		os.Exit(2)
	}
	tl, _ := w.Tool("write_file")
	raw, _ := json.Marshal(args{"path": "f.txt", "content": strings.Repeat("x", 4<<20)})
	for {
		tl.Run(context.Background(), raw)
	}
}
