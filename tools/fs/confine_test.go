package fs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
