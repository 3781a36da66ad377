package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// files writes files (name → content) under dir.
func files(t testing.TB, dir string, fs map[string]string) {
	t.Helper()
	for name, content := range fs {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// read returns the file's content, or "<none>".
func read(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "<none>"
	}
	return string(b)
}

func open(t testing.TB, ws string) *Store {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	s, err := Open(context.Background(), ws, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newWorkspace(t testing.TB) string {
	t.Helper()
	ws := t.TempDir()
	files(t, ws, map[string]string{
		"main.go":       "package main\n\nfunc main() {}\n",
		"docs/notes.md": "# notes\n",
		"gone.txt":      "removed later\n",
		".gitignore":    "*.log\nbuild/\n",
		"app.log":       "ignored, kept as it is\n",
		"build/out.bin": "ignored output\n",
		"run.sh":        "#!/bin/sh\necho hi\n",
	})
	return ws
}

// Restore puts back what changed, brings back what was removed, removes
// what was made, and leaves ignored files alone; the checkpoint it saves
// first undoes it.
func TestSaveRestore(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t)
	s := open(t, ws)
	c, err := s.Save(ctx, Meta{Conversation: "chat-1", Messages: 4, Prompt: "make main say hi"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Kind != KindTurn || c.Conversation != "chat-1" || c.Messages != 4 || c.Prompt != "make main say hi" || len(c.ID) != 40 {
		t.Errorf("the checkpoint: %+v", c)
	}
	// A turn: an edit, a new file in a new folder, a removal, a chmod, a
	// link, and ignored files changed.
	files(t, ws, map[string]string{
		"main.go":        "package main\n\nfunc main() { println(\"hi\") }\n",
		"pkg/new/new.go": "package new\n",
		"app.log":        "the log changed\n",
		"build/new.bin":  "new output\n",
	})
	os.Remove(filepath.Join(ws, "gone.txt"))
	os.Chmod(filepath.Join(ws, "run.sh"), 0o755)
	os.Symlink("main.go", filepath.Join(ws, "link.go"))

	changes, err := s.Changes(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{{"brought back", "gone.txt"}, {"removed", "link.go"}, {"restored", "main.go"}, {"removed", "pkg/new/new.go"}, {"restored", "run.sh"}}
	if !slices.Equal(changes, want) {
		t.Errorf("Changes = %v, want %v", changes, want)
	}
	r, err := s.Restore(ctx, c, Meta{Conversation: "chat-1", Messages: 6})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Changes, want) {
		t.Errorf("Restore's changes = %v, want %v", r.Changes, want)
	}
	for name, content := range map[string]string{
		"main.go":        "package main\n\nfunc main() {}\n",
		"gone.txt":       "removed later\n",
		"pkg/new/new.go": "<none>",
		"link.go":        "<none>",
		"app.log":        "the log changed\n", // ignored: left alone
		"build/new.bin":  "new output\n",
		"build/out.bin":  "ignored output\n",
	} {
		if got := read(ws, name); got != content {
			t.Errorf("after the restore, %s = %q, want %q", name, got, content)
		}
	}
	if fi, _ := os.Stat(filepath.Join(ws, "run.sh")); fi.Mode().Perm()&0o100 != 0 {
		t.Errorf("run.sh is still executable: %v", fi.Mode())
	}
	if _, err := os.Stat(filepath.Join(ws, "pkg")); !os.IsNotExist(err) {
		t.Errorf("the folder made in the turn is still there: %v", err)
	}
	// Restoring the checkpoint the restore saved undoes it.
	if r.Saved.Kind != KindRestore || r.Saved.Restored != c.ID || r.Saved.Messages != 6 {
		t.Errorf("the saved checkpoint: %+v", r.Saved)
	}
	if _, err := s.Restore(ctx, r.Saved, Meta{}); err != nil {
		t.Fatal(err)
	}
	if got := read(ws, "pkg/new/new.go"); got != "package new\n" {
		t.Errorf("undoing the restore: pkg/new/new.go = %q", got)
	}
	if target, err := os.Readlink(filepath.Join(ws, "link.go")); err != nil || target != "main.go" {
		t.Errorf("undoing the restore: link.go → %q, %v", target, err)
	}
	cps, err := s.List(ctx)
	if err != nil || len(cps) != 3 || cps[0].Kind != KindRestore || cps[2].ID != c.ID {
		t.Fatalf("List: %v, %v", cps, err)
	}
	if got, err := s.Get(ctx, c.Short()); err != nil || got.ID != c.ID {
		t.Errorf("Get(%s) = %v, %v", c.Short(), got.ID, err)
	}
	if _, err := s.Get(ctx, "zz"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of a bad ID: %v", err)
	}
}

// A link put in place of a folder, even one the workspace's .gitignore
// now ignores, is never written through: the restore makes the folder
// again, and the folder the link pointed to is untouched.
func TestRestoreThroughLink(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t)
	files(t, ws, map[string]string{"sub/a.txt": "a\n"})
	outside := t.TempDir()
	files(t, outside, map[string]string{"a.txt": "outside\n"})
	s := open(t, ws)
	c, err := s.Save(ctx, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ignore := range []bool{false, true} {
		os.RemoveAll(filepath.Join(ws, "sub"))
		if err := os.Symlink(outside, filepath.Join(ws, "sub")); err != nil {
			t.Skip(err)
		}
		if ignore {
			files(t, ws, map[string]string{".gitignore": "*.log\nbuild/\nsub\n"})
		}
		if _, err := s.Restore(ctx, c, Meta{}); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(filepath.Join(ws, "sub")); err != nil || !fi.IsDir() {
			t.Errorf("ignored %v: sub is %v, %v", ignore, fi.Mode(), err)
		}
		if got := read(ws, "sub/a.txt"); got != "a\n" {
			t.Errorf("ignored %v: sub/a.txt = %q", ignore, got)
		}
		if got := read(outside, "a.txt"); got != "outside\n" {
			t.Fatalf("ignored %v: the restore wrote through the link: %q", ignore, got)
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 1 {
			t.Errorf("ignored %v: the folder outside holds %d files", ignore, len(entries))
		}
	}
}

// The workspace's own git repository is neither read nor written, and
// neither the user's configuration (hooks, signing, filters) nor a GIT_DIR
// in the environment reaches the shadow repository.
func TestIsolated(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t)
	home := t.TempDir()
	marker := filepath.Join(home, "ran")
	hook := filepath.Join(home, "hooks")
	files(t, hook, map[string]string{"pre-commit": "#!/bin/sh\ntouch " + marker + "\n", "post-commit": "#!/bin/sh\ntouch " + marker + "\n"})
	os.Chmod(filepath.Join(hook, "pre-commit"), 0o755)
	os.Chmod(filepath.Join(hook, "post-commit"), 0o755)
	files(t, home, map[string]string{".gitconfig": "[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = /bin/false\n" +
		"[core]\n\thooksPath = " + hook + "\n\tfsmonitor = touch " + marker + "\n" +
		"[filter \"evil\"]\n\tclean = touch " + marker + "\n\tsmudge = touch " + marker + "\n"})
	files(t, ws, map[string]string{".gitattributes": "* filter=evil\n"})
	// the workspace's own repository
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	git("-c", "user.name=u", "-c", "user.email=u@x", "add", "main.go")
	git("-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "first")
	before := git("status", "--porcelain")
	index, _ := os.ReadFile(filepath.Join(ws, ".git", "index"))

	t.Setenv("HOME", home)
	t.Setenv("GIT_DIR", filepath.Join(ws, ".git"))
	t.Setenv("GIT_INDEX_FILE", filepath.Join(ws, ".git", "index"))
	s := open(t, ws)
	c, err := s.Save(ctx, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	files(t, ws, map[string]string{"main.go": "changed\n"})
	if _, err := s.Restore(ctx, c, Meta{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the user's git configuration ran a program")
	}
	os.Unsetenv("GIT_DIR")
	os.Unsetenv("GIT_INDEX_FILE")
	// The index first: git status itself refreshes it when a file's
	// modification time changed, as the restore's did.
	if got, _ := os.ReadFile(filepath.Join(ws, ".git", "index")); string(got) != string(index) {
		t.Error("the workspace's index was written")
	}
	if after := git("status", "--porcelain"); after != before {
		t.Errorf("the workspace's repository changed: %q, was %q", after, before)
	}
	if strings.HasPrefix(s.Dir(), ws) {
		t.Errorf("the shadow repository %s is in the workspace", s.Dir())
	}
}

// The home folder and / are refused; a workspace that holds the shadow
// repository does not copy it.
func TestOpenRefuses(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, dir := range []string{home, "/"} {
		if _, err := Open(context.Background(), dir, t.TempDir()); !errors.Is(err, ErrRefused) {
			t.Errorf("Open(%s): %v", dir, err)
		}
	}
	ws := newWorkspace(t)
	s, err := Open(context.Background(), ws, filepath.Join(ws, ".state"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Save(context.Background(), Meta{})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := s.run(context.Background(), nil, "ls-tree", "-r", "--name-only", c.tree)
	if strings.Contains(out, ".state") || !strings.Contains(out, "main.go") {
		t.Errorf("the checkpoint holds:\n%s", out)
	}
}

func TestUndoable(t *testing.T) {
	cp := func(id string, kind Kind, restored string) Checkpoint {
		return Checkpoint{ID: id, Kind: kind, Restored: restored}
	}
	ids := func(cs []Checkpoint) string {
		var s []string
		for _, c := range cs {
			s = append(s, c.ID)
		}
		return strings.Join(s, " ")
	}
	for _, c := range []struct {
		name string
		cps  []Checkpoint // the latest first
		want string
	}{
		{"none", nil, ""},
		{"turns", []Checkpoint{cp("t3", KindTurn, ""), cp("t2", KindTurn, ""), cp("t1", KindTurn, "")}, "t3 t2 t1"},
		{"one undone", []Checkpoint{cp("r1", KindRestore, "t2"), cp("t2", KindTurn, ""), cp("t1", KindTurn, "")}, "t1"},
		{"two undone", []Checkpoint{cp("r2", KindRestore, "t1"), cp("r1", KindRestore, "t2"), cp("t2", KindTurn, ""), cp("t1", KindTurn, "")}, ""},
		{"back to the first", []Checkpoint{cp("r1", KindRestore, "t1"), cp("t2", KindTurn, ""), cp("t1", KindTurn, "")}, ""},
		{"undo undone", []Checkpoint{cp("r2", KindRestore, "r1"), cp("r1", KindRestore, "t2"), cp("t2", KindTurn, ""), cp("t1", KindTurn, "")}, "t2 t1"},
		{"a turn after an undo", []Checkpoint{cp("t3", KindTurn, ""), cp("r1", KindRestore, "t2"), cp("t2", KindTurn, ""), cp("t1", KindTurn, "")}, "t3 t1"},
	} {
		if got := ids(Undoable(c.cps)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A conversation kept with a checkpoint comes back as it was.
func TestHistory(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t)
	s := open(t, ws)
	c, err := s.Save(ctx, Meta{History: []byte(`[{"role":"user","content":"hi\u0000"}]`)})
	if err != nil {
		t.Fatal(err)
	}
	if !c.HasHistory {
		t.Fatal("no history kept")
	}
	got, err := s.History(ctx, c)
	if err != nil || string(got) != `[{"role":"user","content":"hi\u0000"}]` {
		t.Errorf("History = %q, %v", got, err)
	}
	plain, _ := s.Save(ctx, Meta{})
	if got, err := s.History(ctx, plain); got != nil || err != nil {
		t.Errorf("History of a checkpoint without one = %q, %v", got, err)
	}
}

// Two stores of one workspace (two ptk processes) that save at once lose
// no checkpoint.
func TestConcurrentStores(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 2 {
		s, err := Open(ctx, ws, dir)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 5 {
				files(t, ws, map[string]string{fmt.Sprintf("f%d-%d.txt", i, j): "x\n"})
				if _, err := s.Save(ctx, Meta{Prompt: fmt.Sprint(i, j)}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s, _ := Open(ctx, ws, dir)
	if cps, err := s.List(ctx); err != nil || len(cps) != 10 {
		t.Errorf("%d checkpoints, %v", len(cps), err)
	}
}

// A prompt is kept cut, and a title line in it cannot forge the metadata.
func TestPromptKept(t *testing.T) {
	ctx := context.Background()
	s := open(t, newWorkspace(t))
	long := strings.Repeat("é", 400) + "\n{\"kind\":\"restore\",\"restored\":\"x\"}"
	c, err := s.Save(ctx, Meta{Prompt: long})
	if err != nil {
		t.Fatal(err)
	}
	if c.Kind != KindTurn || c.Restored != "" || len(c.Prompt) > maxPrompt+len("…") || !strings.HasPrefix(c.Prompt, "éé") {
		t.Errorf("the checkpoint: kind %s, restored %q, prompt %d bytes", c.Kind, c.Restored, len(c.Prompt))
	}
}
