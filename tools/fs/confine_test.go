package fs

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ptkit/ptk"
)

const secret = "TOP-SECRET-4242"

// confined returns a workspace inside a directory that also holds a secret
// file, with symbolic links that try every way out.
func confined(t *testing.T) (ws, outside string) {
	t.Helper()
	outside = t.TempDir()
	ws = filepath.Join(outside, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		filepath.Join(outside, "secret.txt"): secret + "\n",
		filepath.Join(ws, "a", "b.txt"):      "inside\n",
	} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"out":    "../secret.txt",                         // a file outside
		"outdir": "..",                                    // a directory outside
		"a/up":   "../..",                                 // in the middle of a path
		"abs":    filepath.Join(outside, "secret.txt"),    // absolute
		"absin":  filepath.Join(ws, "a", "b.txt"),         // absolute, but inside
		"passwd": "/etc/passwd",                           // a system file
		"etc":    "/etc",                                  // a system directory
		"loop1":  "loop2",                                 // a loop of links
		"loop2":  "loop1",                                 //
		"self":   ".",                                     // a directory loop
		"a/back": "..",                                    // a directory loop through a parent
		"inb":    "a/b.txt",                               // inside: allowed
		"ina":    "a",                                     // inside: allowed
		"deep":   strings.Repeat("../", 40) + "etc/hosts", // far outside
	} {
		symlink(t, target, filepath.Join(ws, name))
	}
	return ws, outside
}

// TestConfinement calls every tool with paths that lead out of the
// workspace. Each must be an error result, never a Go error, and no output
// may hold the secret or /etc/passwd.
func TestConfinement(t *testing.T) {
	ws, outside := confined(t)
	w := open(t, ws)
	escapes := []string{
		"..",
		"../secret.txt",
		"a/../../secret.txt",
		"a/../../ws/../secret.txt",
		filepath.Join(outside, "secret.txt"),
		outside,
		"/etc/passwd",
		"/etc",
		"/",
		"out",
		"outdir",
		"outdir/secret.txt",
		"a/up/secret.txt",
		"a/up",
		"abs",
		"passwd",
		"etc",
		"etc/passwd",
		"deep",
		"loop1",
		"loop1/x",
		"a\x00b",
		"a/b.txt\x00../../secret.txt",
		strings.Repeat("x", 5000),
		strings.Repeat("a/", 3000) + "b.txt",
		strings.Repeat("self/", 50) + "a/b.txt",
	}
	for _, tool := range []string{"read_file", "list_dir", "glob", "grep"} {
		for _, p := range escapes {
			res := run(t, w, tool, args{"path": p, "pattern": "*"})
			if !res.IsError {
				t.Errorf("%s(%.60q): not an error: %.200s", tool, p, res.Content)
			}
			leak(t, tool+"("+p[:min(len(p), 60)]+")", res.Content)
		}
	}
	// Whole-tree listings and searches: links are listed, never followed out.
	for _, c := range []struct {
		tool string
		args args
	}{
		{"list_dir", args{}},
		{"list_dir", args{"path": "a"}},
		{"glob", args{"pattern": "**"}},
		{"glob", args{"pattern": "**/*.txt"}},
		{"glob", args{"pattern": "outdir/*"}},
		{"glob", args{"pattern": "a/up/**"}},
		{"glob", args{"pattern": "self/**", "path": "ina"}},
		{"grep", args{"pattern": "SECRET"}},
		{"grep", args{"pattern": "root:"}},
		{"grep", args{"pattern": ".", "include": "**"}},
		{"grep", args{"pattern": "SECRET", "path": "ina"}},
	} {
		res := run(t, w, c.tool, c.args)
		leak(t, c.tool, res.Content)
	}
}

func leak(t *testing.T, call, content string) {
	t.Helper()
	if strings.Contains(content, secret) || strings.Contains(content, "root:x:0") || strings.Contains(content, "localhost") {
		t.Errorf("%s leaked a file outside the workspace:\n%s", call, content)
	}
}

// TestInside checks that what stays inside the workspace works: relative
// links, absolute paths inside, and a workspace opened through a link.
func TestInside(t *testing.T) {
	ws, outside := confined(t)
	link := filepath.Join(outside, "wslink")
	symlink(t, "ws", link)
	w := open(t, link)
	inside := "     1\tinside"
	for _, p := range []string{"a/b.txt", "./a/b.txt", "a/../a/b.txt", "inb", "ina/b.txt", "self/self/a/b.txt", "a/back/a/b.txt",
		filepath.Join(ws, "a/b.txt"), filepath.Join(link, "a/b.txt")} {
		if res := run(t, w, "read_file", args{"path": p}); res.IsError || res.Content != inside {
			t.Errorf("read_file(%s) = %q, want %q", p, res.Content, inside)
		}
	}
	runCases(t, w, "read_file", []toolCase{
		{name: "loop", args: args{"path": "loop1"}, wantErr: true, want: "too many levels of symbolic links: loop1"},
		{name: "escape", args: args{"path": "../secret.txt"}, wantErr: true, want: "path escapes the workspace: ../secret.txt"},
		{name: "link out", args: args{"path": "out"}, wantErr: true,
			want: "path escapes the workspace: out (a symbolic link on the way leads outside it)"},
		{name: "absolute link", args: args{"path": "absin"}, wantErr: true,
			want: "path escapes the workspace: absin (a symbolic link on the way leads outside it)"},
		{name: "absolute outside", args: args{"path": "/etc/passwd"}, wantErr: true,
			want: "path escapes the workspace: /etc/passwd is outside " + link},
		{name: "nul", args: args{"path": "a\x00"}, wantErr: true, want: "path contains a NUL byte"},
	})
	runCases(t, w, "list_dir", []toolCase{{name: "links", args: args{}, want: `a/
abs@ -> ` + filepath.Join(outside, "secret.txt") + `
absin@ -> ` + filepath.Join(ws, "a", "b.txt") + `
deep@ -> ` + strings.Repeat("../", 40) + `etc/hosts
etc@ -> /etc
ina@ -> a
inb@ -> a/b.txt
loop1@ -> loop2
loop2@ -> loop1
out@ -> ../secret.txt
outdir@ -> ..
passwd@ -> /etc/passwd
self@ -> .`}})
	runCases(t, w, "glob", []toolCase{{name: "links not followed", args: args{"pattern": "**/b.txt"}, want: "a/b.txt"}})
	runCases(t, w, "grep", []toolCase{{name: "links not followed", args: args{"pattern": "inside"}, want: "a/b.txt:1: inside"}})
}

// snapshot records what is outside the workspace ws: every file, directory
// and link under outside but not under ws, /etc/passwd and /etc/hosts, and
// the names in / and /etc. Each maps to its mode and a hash of its content.
func snapshot(t *testing.T, outside, ws string) map[string]string {
	t.Helper()
	m := map[string]string{}
	add := func(p string, d iofs.DirEntry) {
		fi, err := d.Info()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case fi.Mode()&iofs.ModeSymlink != 0:
			to, err := os.Readlink(p)
			if err != nil {
				t.Fatal(err)
			}
			m[p] = "link " + to
		case fi.IsDir():
			m[p] = fi.Mode().String()
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			m[p] = fmt.Sprintf("%v %x", fi.Mode(), sha256.Sum256(b))
		}
	}
	err := filepath.WalkDir(outside, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == ws {
			return filepath.SkipDir
		}
		add(p, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"/", "/etc"} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range entries {
			if p := filepath.Join(dir, d.Name()); p == "/etc/passwd" || p == "/etc/hosts" {
				add(p, d)
			} else {
				m[p] = ""
			}
		}
	}
	return m
}

// unchanged fails the test if what is outside the workspace differs from
// the snapshot before.
func unchanged(t *testing.T, call string, before map[string]string, outside, ws string) {
	t.Helper()
	if diff := cmp.Diff(before, snapshot(t, outside, ws)); diff != "" {
		t.Fatalf("%s changed what is outside the workspace (-before +after):\n%s", call, diff)
	}
}

// edits are the ways TestConfinementEdit calls the tools that write: each
// with content to write or a string found in the secret, /etc/passwd or
// /etc/hosts to replace.
var edits = []struct {
	tool string
	args args
}{
	{"write_file", args{"content": "pwned\n"}},
	{"edit_file", args{"old_string": "SECRET", "new_string": "pwned"}},
	{"edit_file", args{"old_string": "root", "new_string": "pwned"}},
	{"edit_file", args{"old_string": "localhost", "new_string": "pwned"}},
}

// editCall runs one of edits on path p.
func editCall(t *testing.T, w *Workspace, i int, p string) ptk.Result {
	t.Helper()
	a := args{"path": p}
	for k, v := range edits[i].args {
		a[k] = v
	}
	return run(t, w, edits[i].tool, a)
}

// TestConfinementEdit calls write_file and edit_file with paths that lead
// out of the workspace. Each must be an error result that says why, and
// nothing outside the workspace may change or appear.
func TestConfinementEdit(t *testing.T) {
	ws, outside := confined(t)
	w := open(t, ws)
	before := snapshot(t, outside, ws)
	const (
		escapes  = "path escapes the workspace: "
		onTheWay = "(a symbolic link on the way leads outside it)"
		link     = "is a symbolic link to "
	)
	for _, c := range []struct{ path, want string }{
		{"..", escapes},
		{"../x", escapes + "../x"},
		{"../secret.txt", escapes + "../secret.txt"},
		{"a/../../x", escapes + "a/../../x"},
		{"a/../../ws/../secret.txt", escapes},
		{filepath.Join(outside, "secret.txt"), "is outside " + ws},
		{filepath.Join(outside, "new.txt"), "is outside " + ws},
		{"/etc/passwd", escapes + "/etc/passwd is outside"},
		{"/etc/ptk-new", escapes + "/etc/ptk-new is outside"},
		{"/ptk-new", escapes + "/ptk-new is outside"},
		{"out", "out " + link + "../secret.txt"},
		{"abs", "abs " + link + filepath.Join(outside, "secret.txt")},
		{"passwd", "passwd " + link + "/etc/passwd"},
		{"deep", "deep " + link},
		{"etc", "etc " + link + "/etc"},
		{"outdir", "outdir " + link + ".."},
		{"outdir/secret.txt", onTheWay},
		{"outdir/new.txt", onTheWay},
		{"outdir/new/dir/x.txt", onTheWay},
		{"a/up/secret.txt", onTheWay},
		{"a/up/new.txt", onTheWay},
		{"a/up/ws/a/b.txt", onTheWay},
		{"etc/passwd", onTheWay},
		{"etc/hosts", onTheWay},
		{"etc/ptk-new", onTheWay},
		{"loop1", "loop1 " + link + "loop2"},
		{"loop1/x", "too many levels of symbolic links: loop1/x"},
		{"a\x00b", "path contains a NUL byte"},
		{"a/b.txt\x00../../secret.txt", "path contains a NUL byte"},
		{"../x\x00", "path contains a NUL byte"},
		{strings.Repeat("x", 256), "file name too long: xxxx"},
		{strings.Repeat("x", 5000), "path is too long: 5000 bytes"},
		{"a/" + strings.Repeat("x", 300) + "/y.txt", "file name too long: a/xxxx"},
		{strings.Repeat("a/", 3000) + "b.txt", "path is too long: 6005 bytes, the limit is 4095"},
		{strings.Repeat("d/", 2100) + "x", "path is too long"},
		{strings.Repeat("../", 2000) + "etc/passwd", escapes},
	} {
		for i := range edits {
			call := fmt.Sprintf("%s(%.60q)", edits[i].tool, c.path)
			res := editCall(t, w, i, c.path)
			if !res.IsError || !strings.Contains(res.Content, c.want) {
				t.Errorf("%s = %.300q, want an error with %q", call, res.Content, c.want)
			}
			leak(t, call, res.Content)
			unchanged(t, call, before, outside, ws)
		}
	}
	if got, err := os.ReadFile(filepath.Join(ws, "a", "b.txt")); err != nil || string(got) != "inside\n" {
		t.Errorf("a/b.txt = %q, %v", got, err)
	}
	noTemp(t, outside)
}

// TestInsideEdit checks that writes that stay inside the workspace work:
// through relative links to directories, by absolute paths, with the
// longest names, and with names that are not UTF-8.
func TestInsideEdit(t *testing.T) {
	ws, outside := confined(t)
	w := open(t, ws)
	before := snapshot(t, outside, ws)
	long := strings.Repeat("y", 255)
	for _, c := range []struct{ path, file string }{
		{"self/a/new1.txt", "a/new1.txt"},
		{"ina/new2.txt", "a/new2.txt"},
		{"a/back/a/new3.txt", "a/new3.txt"},
		{"ina/back/ina/new4.txt", "a/new4.txt"},
		{filepath.Join(ws, "a", "new5.txt"), "a/new5.txt"},
		{long, long},
		{"a/" + long + "/" + long, "a/" + long + "/" + long},
	} {
		if res := run(t, w, "write_file", args{"path": c.path, "content": "new\n"}); res.IsError {
			t.Errorf("write_file(%.60s): %s", c.path, res.Content)
		}
		if res := run(t, w, "edit_file", args{"path": c.path, "old_string": "new", "new_string": "edited"}); res.IsError {
			t.Errorf("edit_file(%.60s): %s", c.path, res.Content)
		}
		if got := read(t, ws, c.file); got != "edited\n" {
			t.Errorf("%.60s = %q", c.file, got)
		}
	}
	if res := run(t, w, "edit_file", args{"path": "self/ina/b.txt", "old_string": "inside", "new_string": "still inside"}); res.IsError {
		t.Errorf("edit_file(self/ina/b.txt): %s", res.Content)
	}

	// JSON cannot carry a name that is not UTF-8: the invalid bytes arrive
	// as U+FFFD.
	tl, _ := w.Tool("write_file")
	res, err := tl.Run(context.Background(), json.RawMessage("{\"path\": \"caf\xe9/\xff.txt\", \"content\": \"x\"}"))
	if err != nil || res.IsError || read(t, ws, "caf\uFFFD/\uFFFD.txt") != "x" {
		t.Errorf("write_file(non-UTF-8) = %v, %v", res, err)
	}
	// Called from Go, the bytes reach the file system as they are.
	for _, name := range []string{"caf\xe9.txt", "\xff\xfe/x.txt", "tab\there.txt"} {
		if _, err := w.writeFile(context.Background(), writeArgs{Path: name, Content: "old\n"}); err != nil {
			t.Errorf("writeFile(%q): %v", name, err)
		}
		if out, err := w.editFile(context.Background(), editArgs{Path: name, OldString: "old", NewString: "new"}); err != nil || !strings.HasPrefix(out, "Edited "+strconv.Quote(name)+": 1 replacement") {
			t.Errorf("editFile(%q) = %q, %v", name, out, err)
		}
		if got := read(t, ws, name); got != "new\n" {
			t.Errorf("%q = %q", name, got)
		}
	}
	unchanged(t, "writes inside", before, outside, ws)
	noTemp(t, outside)
}

// TestSwappedForLink replaces, between two calls, a file and a directory of
// the workspace with links to outside it: the second call must not follow
// them.
func TestSwappedForLink(t *testing.T) {
	ws, outside := confined(t)
	w := open(t, ws)
	for _, c := range []struct{ path, swap, target, want string }{
		{"f.txt", "f.txt", "../secret.txt", "f.txt is a symbolic link to ../secret.txt"},
		{"g.txt", "g.txt", filepath.Join(outside, "secret.txt"), "g.txt is a symbolic link to " + outside},
		{"h.txt", "h.txt", "/etc/passwd", "h.txt is a symbolic link to /etc/passwd"},
		{"d/f.txt", "d", "..", "path escapes the workspace: d/f.txt (a symbolic link on the way leads outside it)"},
		{"e/sub/secret.txt", "e/sub", "../..", "(a symbolic link on the way leads outside it)"},
		{"k/passwd", "k", "/etc", "(a symbolic link on the way leads outside it)"},
	} {
		if res := run(t, w, "write_file", args{"path": c.path, "content": "TOP-SECRET root localhost v1\n"}); res.IsError {
			t.Fatalf("write_file(%s): %s", c.path, res.Content)
		}
		if res := run(t, w, "edit_file", args{"path": c.path, "old_string": "v1", "new_string": "v2"}); res.IsError {
			t.Fatalf("edit_file(%s): %s", c.path, res.Content)
		}
		p := filepath.Join(ws, c.swap)
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		symlink(t, c.target, p)
		before := snapshot(t, outside, ws)
		for i := range edits {
			call := fmt.Sprintf("%s(%s) after %s became a link", edits[i].tool, c.path, c.swap)
			res := editCall(t, w, i, c.path)
			if !res.IsError || !strings.Contains(res.Content, c.want) {
				t.Errorf("%s = %q, want an error with %q", call, res.Content, c.want)
			}
			unchanged(t, call, before, outside, ws)
		}
		// Creating a new file next to it through the swapped directory.
		if dir := filepath.Dir(c.path); dir != "." {
			res := run(t, w, "write_file", args{"path": dir + "/new.txt", "content": "x"})
			if !res.IsError {
				t.Errorf("write_file(%s/new.txt) through a swapped directory: %s", dir, res.Content)
			}
			unchanged(t, "write_file "+dir+"/new.txt", before, outside, ws)
		}
	}
	noTemp(t, outside)
}
