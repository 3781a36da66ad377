package checkpoint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The attack: a model's command (sandboxed, so that it cannot run anything
// outside) makes a nested git repository in the workspace whose own
// configuration names programs: core.fsmonitor, a clean filter for every
// file. The checkpoints are taken by ptk itself, outside any sandbox and
// without asking anyone; git must never run what the nested repository's
// configuration names, at any step (saving twice, listing the changes,
// restoring, saving after the restore).
func TestNestedRepositoryConfigNeverRuns(t *testing.T) {
	ws := newWorkspace(t)
	s := open(t, ws)
	ctx := context.Background()
	first, err := s.Save(ctx, Meta{Prompt: "first"})
	if err != nil {
		t.Fatal(err)
	}
	ran := t.TempDir()
	sub := filepath.Join(ws, "vendor", "lib")
	gitIn := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", sub}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn("init", "-q")
	files(t, sub, map[string]string{"lib.go": "package lib\n", ".gitattributes": "* filter=evil\n"})
	gitIn("-c", "user.name=m", "-c", "user.email=m@x", "add", ".")
	gitIn("-c", "user.name=m", "-c", "user.email=m@x", "commit", "-q", "-m", "lib")
	for key, prog := range map[string]string{
		"core.fsmonitor":     "fsmonitor",
		"filter.evil.clean":  "clean",
		"filter.evil.smudge": "smudge",
	} {
		gitIn("config", key, "touch "+filepath.Join(ran, prog)+"; cat")
	}
	files(t, sub, map[string]string{"lib.go": "package lib // changed, so that status would clean it\n"})
	files(t, ws, map[string]string{"main.go": "changed\n"})

	check := func(step string) {
		t.Helper()
		ents, _ := os.ReadDir(ran)
		for _, e := range ents {
			t.Errorf("after %s, git ran the nested repository's %s", step, e.Name())
		}
	}
	if _, err := s.Save(ctx, Meta{Prompt: "second"}); err != nil {
		t.Fatal(err)
	}
	check("a save")
	second, err := s.Save(ctx, Meta{Prompt: "third"})
	if err != nil {
		t.Fatal(err)
	}
	check("a second save")
	if _, err := s.Changes(ctx, first); err != nil {
		t.Fatal(err)
	}
	check("listing the changes")
	if _, err := s.Restore(ctx, first, Meta{}); err != nil {
		t.Fatal(err)
	}
	check("a restore")
	if _, err := s.Restore(ctx, second, Meta{}); err != nil {
		t.Fatal(err)
	}
	check("a restore with the nested repository")
	if _, err := s.Save(ctx, Meta{Prompt: "after"}); err != nil {
		t.Fatal(err)
	}
	check("a save after the restores")
	if got := read(ws, "main.go"); got != "changed\n" {
		t.Errorf("main.go after restoring the second checkpoint: %q", got)
	}
}
