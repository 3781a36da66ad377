package fs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptkit/ptk/tool"
)

// preview asks the named tool what a call would change.
func preview(t *testing.T, w *Workspace, name string, a args) (string, error) {
	t.Helper()
	tl, ok := w.Tool(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	p, ok := tool.As[tool.Previewer](tl)
	if !ok {
		t.Fatalf("%s is not a tool.Previewer", name)
	}
	raw, _ := json.Marshal(a)
	return p.Preview(context.Background(), raw)
}

// An edit's preview is the diff the edit then answers, worked out from
// the file as it is; it changes nothing.
func TestPreviewEdit(t *testing.T) {
	dir := fixture(t)
	w := open(t, dir)
	a := args{"path": "main.go", "old_string": "\tserver.Run()\n", "new_string": "\tif err := server.Run(); err != nil {\n\t\tpanic(err)\n\t}\n"}
	got, err := preview(t, w, "edit_file", a)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "main.go")); strings.Contains(string(b), "panic") {
		t.Fatal("the preview changed the file")
	}
	// the file's own lines around the change, not only the arguments
	if !strings.Contains(got, "@@ -3,5 +3,7 @@\n import \"example.com/demo/internal/server\"\n \n func main() {\n-\tserver.Run()\n+\tif err") {
		t.Errorf("the preview is not the file's diff:\n%s", got)
	}
	res := run(t, w, "edit_file", a)
	if _, d, _ := strings.Cut(res.Content, "\n"); d != got {
		t.Errorf("the preview differs from the edit's diff:\npreview:\n%s\nedit:\n%s", got, d)
	}
	// A call that would fail says why, as the call would.
	_, err = preview(t, w, "edit_file", args{"path": "main.go", "old_string": "no such text", "new_string": "x"})
	if err == nil || !strings.Contains(err.Error(), "old_string was not found in main.go") {
		t.Errorf("a missing old_string: %v", err)
	}
}

// write_file's preview is the diff against the file there, or the new
// file whole; it makes no directory.
func TestPreviewWrite(t *testing.T) {
	dir := fixture(t)
	w := open(t, dir)
	got, err := preview(t, w, "write_file", args{"path": "README.md", "content": "# demo\n\nA big service.\n"})
	if err != nil {
		t.Fatal(err)
	}
	want := "--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n # demo\n \n-A small service.\n+A big service."
	if got != want {
		t.Errorf("preview of a replacement:\n%s\nwant:\n%s", got, want)
	}
	got, err = preview(t, w, "write_file", args{"path": "new/dir/todo.md", "content": "- tests\n"})
	if err != nil || got != "--- /dev/null\n+++ b/new/dir/todo.md\n@@ -0,0 +1 @@\n+- tests" {
		t.Errorf("preview of a new file: %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !os.IsNotExist(err) {
		t.Errorf("the preview made a directory: %v", err)
	}
	got, err = preview(t, w, "write_file", args{"path": "go.mod", "content": "module example.com/demo\n\ngo 1.26\n"})
	if err != nil || got != "no change: go.mod already holds this content" {
		t.Errorf("preview of the same content: %q, %v", got, err)
	}
	got, err = preview(t, w, "write_file", args{"path": "assets/logo.png", "content": "x\n"})
	if err != nil || !strings.Contains(got, "replaces assets/logo.png, a binary or large file") {
		t.Errorf("preview over a binary file: %q, %v", got, err)
	}
}

// A preview reads only what the call could write: a path out of the
// workspace, through a link or "..", or inside .git, is the call's
// refusal, and the file outside is never read.
func TestPreviewConfined(t *testing.T) {
	dir := fixture(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("the secret\n"), 0o644)
	symlink(t, outside, filepath.Join(dir, "out"))
	w := open(t, dir)
	for _, c := range []struct {
		tool string
		a    args
	}{
		{"write_file", args{"path": "out/secret.txt", "content": "x\n"}},
		{"edit_file", args{"path": "out/secret.txt", "old_string": "the secret", "new_string": "x"}},
		{"write_file", args{"path": "../" + filepath.Base(outside) + "/secret.txt", "content": "x\n"}},
		{"edit_file", args{"path": ".git/config", "old_string": "[core]", "new_string": "x"}},
	} {
		got, err := preview(t, w, c.tool, c.a)
		if err == nil || strings.Contains(got+err.Error(), "the secret") {
			t.Errorf("%s %v: %q, %v", c.tool, c.a, got, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "the secret\n" {
		t.Errorf("the file outside changed: %q", b)
	}
	// Arguments that are not the tool's are an error, never a panic.
	tl, _ := w.Tool("edit_file")
	p, _ := tool.As[tool.Previewer](tl)
	if _, err := p.Preview(context.Background(), json.RawMessage(`[1,2`)); err == nil {
		t.Error("bad arguments gave a preview")
	}
}

// Files lists what the tools see: no ignored file, nothing of .git, in
// path order; a limit says there were more.
func TestFiles(t *testing.T) {
	w := open(t, fixture(t))
	files, more, err := w.Files(context.Background(), 0)
	if err != nil || more {
		t.Fatal(err, more)
	}
	got := strings.Join(files, " ")
	for _, hidden := range []string{"app.log", "build/", "node_modules", ".git/", "secrets/", "web/app.js", "docs/other.log"} {
		if strings.Contains(got, hidden) {
			t.Errorf("Files lists %s: %s", hidden, got)
		}
	}
	for _, shown := range []string{"main.go", "internal/server/server.go", "docs/notes.log", "web/keep.js", "link.go"} {
		if !strings.Contains(got, shown) {
			t.Errorf("Files leaves out %s: %s", shown, got)
		}
	}
	some, more, err := w.Files(context.Background(), 3)
	if err != nil || !more || len(some) != 3 || some[0] != files[0] {
		t.Errorf("Files(3) = %v, %v, %v", some, more, err)
	}
}
