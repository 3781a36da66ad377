package fs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestEditFile(t *testing.T) {
	dir := fixture(t)
	for name, content := range map[string]string{
		"dup.go":    "package dup\n\nvar a = 1\nvar b = 1\n\nfunc f() {\n\tx := 1\n\ty := 1\n}\n",
		"indent.go": "package indent\n\nfunc f() {\n\tif ok {\n\t\treturn\n\t}\n}\n",
		"lf.txt":    "one\ntwo\nthree\n",
		"run.sh":    "#!/bin/sh\necho hi\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o750); err != nil {
		t.Fatal(err)
	}
	w := open(t, dir)
	runCases(t, w, "edit_file", []toolCase{
		{name: "one", args: args{"path": "main.go", "old_string": "\tserver.Run()\n", "new_string": "\tif err := server.Run(); err != nil {\n\t\tpanic(err)\n\t}\n"},
			want: `Edited main.go: 1 replacement
--- a/main.go
+++ b/main.go
@@ -3,5 +3,7 @@
 import "example.com/demo/internal/server"
 
 func main() {
-	server.Run()
+	if err := server.Run(); err != nil {
+		panic(err)
+	}
 }`},
		{name: "within a line", args: args{"path": "run.sh", "old_string": "hi", "new_string": "hello"},
			want: "Edited run.sh: 1 replacement\n--- a/run.sh\n+++ b/run.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo hi\n+echo hello"},
		{name: "ambiguous", args: args{"path": "dup.go", "old_string": " = 1", "new_string": " = 2"}, wantErr: true,
			want: "old_string was found 2 times in dup.go, at lines 3, 4; add the lines around the one to change to old_string to make it unique, or set replace_all to true to replace every one"},
		{name: "ambiguous on lines", args: args{"path": "dup.go", "old_string": "1", "new_string": "2"}, wantErr: true,
			has: []string{"found 4 times in dup.go, at lines 3, 4, 7, 8;"}},
		{name: "replace all", args: args{"path": "dup.go", "old_string": "1", "new_string": "2", "replace_all": true},
			has: []string{"Edited dup.go: 4 replacements\n--- a/dup.go\n+++ b/dup.go\n@@ -1,9 +1,9 @@\n package dup\n \n-var a = 1\n-var b = 1\n+var a = 2\n+var b = 2\n"}},
		{name: "replace all of one", args: args{"path": "lf.txt", "old_string": "two", "new_string": "2", "replace_all": true},
			has: []string{"Edited lf.txt: 1 replacement\n"}},
		{name: "indentation", args: args{"path": "indent.go", "old_string": "if ok {\n    return\n}", "new_string": "x"}, wantErr: true,
			want: "old_string was not found in indent.go; a match ignoring indentation is at lines 4-6; old_string must match exactly, including whitespace"},
		{name: "whitespace", args: args{"path": "indent.go", "old_string": "func  f()  {", "new_string": "x"}, wantErr: true,
			want: "old_string was not found in indent.go; a match ignoring whitespace is at line 3; old_string must match exactly, including whitespace"},
		{name: "not found", args: args{"path": "indent.go", "old_string": "func g()", "new_string": "x"}, wantErr: true,
			want: "old_string was not found in indent.go; it must match the file's current content exactly (read_file shows it)"},
		{name: "missing", args: args{"path": "nope.go", "old_string": "a", "new_string": "b"}, wantErr: true,
			want: "no such file: nope.go; to create a file, use write_file"},
		{name: "missing folder", args: args{"path": "nope/x.go", "old_string": "a", "new_string": "b"}, wantErr: true,
			want: "no such file: nope/x.go; to create a file, use write_file"},
		{name: "empty old_string", args: args{"path": "main.go", "old_string": "", "new_string": "b"}, wantErr: true,
			want: "old_string is empty; to create a file, or to replace all of its content, use write_file"},
		{name: "same", args: args{"path": "main.go", "old_string": "main", "new_string": "main"}, wantErr: true,
			want: "old_string and new_string are the same; there is nothing to change"},
		{name: "binary", args: args{"path": "assets/logo.png", "old_string": "IHDR", "new_string": "x"}, wantErr: true,
			want: "assets/logo.png is a binary file; edit_file edits text files only"},
		{name: "directory", args: args{"path": "internal", "old_string": "a", "new_string": "b"}, wantErr: true,
			want: "internal is a directory; name a file"},
		{name: "symbolic link", args: args{"path": "link.go", "old_string": "main", "new_string": "x"}, wantErr: true,
			want: "link.go is a symbolic link to main.go; edit_file does not replace links: write the link's target instead"},
		{name: "crlf", args: args{"path": "crlf.txt", "old_string": "one\ntwo\n", "new_string": "1\n2\n2.5\n"},
			want: "Edited crlf.txt: 1 replacement (CRLF line endings kept)\n--- a/crlf.txt\n+++ b/crlf.txt\n@@ -1,3 +1,4 @@\n-one\n-two\n+1\n+2\n+2.5\n three"},
		{name: "crlf given", args: args{"path": "crlf.txt", "old_string": "three\r\n", "new_string": "3\r\n"},
			has: []string{"Edited crlf.txt: 1 replacement\n"}},
		{name: "lf file, crlf given", args: args{"path": "lf.txt", "old_string": "one\r\n", "new_string": "1\r\n"},
			has: []string{"Edited lf.txt: 1 replacement\n"}},
	})
	for name, want := range map[string]string{
		"dup.go":   "package dup\n\nvar a = 2\nvar b = 2\n\nfunc f() {\n\tx := 2\n\ty := 2\n}\n",
		"crlf.txt": "1\r\n2\r\n2.5\r\n3\r\n",
		"lf.txt":   "1\n2\nthree\n",
		"run.sh":   "#!/bin/sh\necho hello\n",
		"link.go":  "package main\n\nimport \"example.com/demo/internal/server\"\n\nfunc main() {\n\tif err := server.Run(); err != nil {\n\t\tpanic(err)\n\t}\n}\n",
	} {
		if got := read(t, dir, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("run.sh lost its mode: %v %v", fi.Mode(), err)
	}
	noTemp(t, dir)
}

func TestEditDiffCut(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "many.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	w := open(t, dir)
	res := run(t, w, "edit_file", args{"path": "many.txt", "old_string": "line", "new_string": "row", "replace_all": true})
	ls := strings.Split(res.Content, "\n")
	if res.IsError || ls[0] != "Edited many.txt: 500 replacements" || len(ls) != 1+maxDiffLines+1 || ls[len(ls)-1] != "(diff cut at 200 lines)" {
		t.Errorf("got %d lines:\n%s", len(ls), res.Content)
	}
	if !strings.HasPrefix(res.Content, "Edited many.txt: 500 replacements\n--- a/many.txt\n+++ b/many.txt\n@@ -1,104 +1,104 @@\n-line 0\n-line 1\n") {
		t.Errorf("adjacent lines are not one block:\n%.200s", res.Content)
	}
	res = run(t, w, "edit_file", args{"path": "many.txt", "old_string": "row 1", "new_string": "row one", "replace_all": true})
	if !strings.HasPrefix(res.Content, "Edited many.txt: 111 replacements\n") || !strings.HasSuffix(res.Content, "\n(diff cut at 200 lines)") {
		t.Errorf("got:\n%s", res.Content)
	}
	if got := read(t, dir, "many.txt"); strings.Count(got, "row") != 500 || strings.Count(got, "row one") != 111 {
		t.Errorf("many.txt:\n%s", got)
	}
}

// TestConcurrentEdits edits one file from many goroutines at once: writes
// run one at a time, so no edit is lost.
func TestConcurrentEdits(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 64 {
		fmt.Fprintf(&b, "k%d;\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "keys.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	w := open(t, dir)
	tl, _ := w.Tool("edit_file")
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			raw := fmt.Sprintf(`{"path": "keys.txt", "old_string": "k%d;", "new_string": "done %d;"}`, i, i)
			if res, err := tl.Run(context.Background(), json.RawMessage(raw)); err != nil || res.IsError {
				t.Errorf("edit %d: %v %s", i, err, res.Content)
			}
		})
	}
	wg.Wait()
	if got := read(t, dir, "keys.txt"); strings.Count(got, "done") != 64 {
		t.Errorf("edits lost:\n%s", got)
	}
	noTemp(t, dir)
}
