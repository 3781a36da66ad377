package outfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ptkit/ptk/internal/outfile"
)

// The attack: a model with a write tool or bash plants report.json ->
// ~/.bashrc in the workspace; the user runs ptk ... --report report.json.
// The write replaces the link with a file and leaves its target as it was.
func TestWriteFileReplacesPlantedLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "bashrc")
	if err := os.WriteFile(target, []byte("user's own\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report.json")
	if err := os.Symlink(target, report); err != nil {
		t.Fatal(err)
	}
	if err := outfile.WriteFile(report, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "user's own\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	fi, err := os.Lstat(report)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("report is not a regular file: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(report); string(b) != "{}\n" {
		t.Errorf("report = %q", b)
	}
	assertNoTemps(t, dir, 1)
}

func TestWriteFileKeepsMode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.go")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := outfile.WriteFile(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want the old file's 0600", fi.Mode().Perm())
	}
	q := filepath.Join(filepath.Dir(p), "fresh.go")
	if err := outfile.WriteFile(q, []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(q); fi.Mode().Perm() != 0o640 {
		t.Errorf("new file's mode = %v, want 0640", fi.Mode().Perm())
	}
}

// A write that is not committed (the command failed half way) leaves the
// old file whole and no temporary file behind.
func TestCreateWithoutCommitLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "trajectory.json")
	if err := os.WriteFile(p, []byte("old whole file"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := outfile.Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old whole file" {
		t.Errorf("file = %q", b)
	}
	assertNoTemps(t, dir, 1)
	if err := f.Commit(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("commit after close: %v", err)
	}
}

func TestCreateRefusesFolder(t *testing.T) {
	dir := t.TempDir()
	if _, err := outfile.Create(dir, 0o644); !errors.Is(err, outfile.ErrNotRegular) {
		t.Errorf("Create(folder) = %v, want ErrNotRegular", err)
	}
}

// The attack on --record: the record is appended to, so it cannot be
// replaced; a planted link or FIFO is refused, not followed or waited on.
func TestOpenAppendRefusesLinksAndFIFOs(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "authorized_keys")
	if err := os.WriteFile(target, []byte("ssh-ed25519 AAAA user\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "record.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := outfile.OpenAppend(link); !errors.Is(err, outfile.ErrNotRegular) {
		t.Errorf("OpenAppend(link) = %v, want ErrNotRegular", err)
	}
	dangling := filepath.Join(dir, "dangling.jsonl")
	if err := os.Symlink(filepath.Join(t.TempDir(), "new-file"), dangling); err != nil {
		t.Fatal(err)
	}
	if _, err := outfile.OpenAppend(dangling); !errors.Is(err, outfile.ErrNotRegular) {
		t.Errorf("OpenAppend(dangling link) = %v, want ErrNotRegular", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := outfile.OpenAppend(fifo); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, outfile.ErrNotRegular) {
			t.Errorf("OpenAppend(fifo) = %v, want ErrNotRegular", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OpenAppend waited on a FIFO")
	}
	if b, _ := os.ReadFile(target); string(b) != "ssh-ed25519 AAAA user\n" {
		t.Errorf("target changed: %q", b)
	}
}

func TestOpenAppendAppends(t *testing.T) {
	p := filepath.Join(t.TempDir(), "record.jsonl")
	for _, line := range []string{"a\n", "b\n"} {
		f, err := outfile.OpenAppend(p)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(line)
		f.Close()
	}
	if b, _ := os.ReadFile(p); string(b) != "a\nb\n" {
		t.Errorf("record = %q", b)
	}
}

func assertNoTemps(t *testing.T, dir string, want int) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	if len(entries) != want {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("folder holds %v, want %d entries", names, want)
	}
}
