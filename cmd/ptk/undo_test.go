package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ptkit/ptk/trace"
)

// ptk run takes a checkpoint before its run changes the workspace; ptk
// undo puts the files back and the conversation to before the turn, and
// the ID it prints undoes the undo, conversation included.
func TestUndo(t *testing.T) {
	ws := workspace(t)
	db := filepath.Join(t.TempDir(), "traces.db")
	mainBefore, _ := os.ReadFile(filepath.Join(ws, "main.go"))

	code, out, errOut := runPTK(t, "", "undo", "--workspace", ws)
	if code != 2 || !strings.Contains(errOut, "nothing to undo") {
		t.Fatalf("undo with no checkpoint: exit %d, %s%s", code, out, errOut)
	}

	_, url := newFakeOpenAI(t, codingReplies()...)
	code, _, errOut = runPTK(t, "", "run", "--base-url", url, "--model", "m", "--mode", "ptk", "--workspace", ws, "--yes",
		"--conversation", "c1", "--trace-db", db, "Greet ptk.")
	if code != 0 || !strings.Contains(errOut, "ptk undo puts them back") {
		t.Fatalf("run: exit %d, stderr %s", code, errOut)
	}
	mainAfter, _ := os.ReadFile(filepath.Join(ws, "main.go"))
	if string(mainAfter) == string(mainBefore) {
		t.Fatal("the run did not edit main.go")
	}
	conv := func() int {
		s, err := trace.Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		msgs, err := s.Load(context.Background(), "c1")
		if err != nil {
			t.Fatal(err)
		}
		return len(msgs)
	}
	n := conv()
	if n < 4 {
		t.Fatalf("the conversation holds %d messages", n)
	}

	code, out, _ = runPTK(t, "", "undo", "--list", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "← ptk undo restores this") || !strings.Contains(out, "Greet ptk.") {
		t.Errorf("undo --list: exit %d\n%s", code, out)
	}

	code, out, errOut = runPTK(t, "", "undo", "--workspace", ws, "--trace-db", db)
	if code != 0 {
		t.Fatalf("undo: exit %d, %s", code, errOut)
	}
	t.Logf("ptk undo says:\n%s", out)
	for _, want := range []string{"restored     main.go", "removed      docs/NOTES.md", "Conversation c1 is back to 0 messages"} {
		if !strings.Contains(out, want) {
			t.Errorf("undo says\n%s\nwithout %q", out, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "main.go")); string(b) != string(mainBefore) {
		t.Errorf("main.go after undo:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(ws, "docs", "NOTES.md")); !os.IsNotExist(err) {
		t.Errorf("the file the run made is still there: %v", err)
	}
	if got := conv(); got != 0 {
		t.Errorf("after undo the conversation holds %d messages", got)
	}

	// The ID undo printed undoes the undo.
	m := regexp.MustCompile(`ptk undo ([0-9a-f]{8}) puts them back`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("undo does not say how to undo it:\n%s", out)
	}
	code, out, errOut = runPTK(t, "", "undo", m[1], "--workspace", ws, "--trace-db", db)
	if code != 0 {
		t.Fatalf("undo %s: exit %d, %s", m[1], code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "main.go")); string(b) != string(mainAfter) {
		t.Errorf("main.go after undoing the undo:\n%s", b)
	}
	if got := conv(); got != n {
		t.Errorf("after undoing the undo the conversation holds %d messages, want %d:\n%s", got, n, out)
	}

	code, _, errOut = runPTK(t, "", "undo", "nosuchid", "--workspace", ws)
	if code != 2 || errOut == "" {
		t.Errorf("undo of an unknown checkpoint: exit %d, %s", code, errOut)
	}
}
