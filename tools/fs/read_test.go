package fs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := fixture(t)
	// 2000 lines of 100 bytes: more than the 50 KB output cap.
	if err := os.WriteFile(filepath.Join(dir, "wide.txt"), []byte(strings.Repeat(strings.Repeat("x", 99)+"\n", 2000)), 0o644); err != nil {
		t.Fatal(err)
	}
	w := open(t, dir)
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "%6d\tline %d\n", i, i)
		}
		return b.String()
	}
	runCases(t, w, "read_file", []toolCase{
		{name: "go.mod", args: args{"path": "go.mod"},
			want: "     1\tmodule example.com/demo\n     2\t\n     3\tgo 1.26"},
		{name: "dot segments", args: args{"path": "./internal/../go.mod", "limit": 1},
			want: "     1\tmodule example.com/demo\n(showing lines 1-1 of 3; use offset=2 to read on)"},
		{name: "absolute inside", args: args{"path": filepath.Join(dir, "go.mod"), "offset": 3},
			want: "     3\tgo 1.26"},
		{name: "symlink inside", args: args{"path": "link.go", "limit": 1},
			has: []string{"     1\tpackage main\n"}},
		{name: "through symlinked dir", args: args{"path": "linkdir/server/server.go", "offset": 3, "limit": 1},
			has: []string{"     3\t// Run starts the server."}},
		{name: "ignored file named", args: args{"path": "app.log"},
			want: "     1\tlog: started"},
		{name: "crlf", args: args{"path": "crlf.txt"},
			want: "     1\tone\n     2\ttwo\n     3\tthree"},
		{name: "latin1", args: args{"path": "latin1.txt"},
			want: "     1\tcaf\uFFFD cr\uFFFDme"},
		{name: "empty", args: args{"path": "empty.txt"},
			want: "(empty.txt is empty)"},
		{name: "default limit", args: args{"path": "big.txt"},
			want: lines(1, 2000) + "(showing lines 1-2000 of 5000; use offset=2001 to read on)"},
		{name: "offset and limit", args: args{"path": "big.txt", "offset": 10, "limit": 3},
			want: lines(10, 12) + "(showing lines 10-12 of 5000; use offset=13 to read on)"},
		{name: "to the end", args: args{"path": "big.txt", "offset": 4998},
			want: strings.TrimSuffix(lines(4998, 5000), "\n")},
		{name: "last line", args: args{"path": "big.txt", "offset": 5000, "limit": 1},
			want: "  5000\tline 5000"},
		{name: "long line", args: args{"path": "internal/server/testdata/wide.txt"},
			has: []string{"     1\tshort\n     2\twide wide ", " … [line cut: 11007 bytes]\n     3\tlast"}},
		{name: "output cap", args: args{"path": "wide.txt"},
			has: []string{"   478\t", "(output capped at 50 KB; showing lines 1-478 of 2000; use offset=479 to read on)"}},
		{name: "offset past end", args: args{"path": "big.txt", "offset": 5001}, wantErr: true,
			want: "offset 5001 is past the end of big.txt, which has 5000 lines"},
		{name: "offset in empty file", args: args{"path": "empty.txt", "offset": 2},
			want: "(empty.txt is empty)"},
		{name: "binary", args: args{"path": "assets/logo.png"}, wantErr: true,
			want: "assets/logo.png is a binary file; read_file shows text files only"},
		{name: "directory", args: args{"path": "internal"}, wantErr: true,
			want: "internal is a directory; use list_dir"},
		{name: "missing", args: args{"path": "nope.txt"}, wantErr: true,
			want: "no such file or directory: nope.txt"},
		{name: "under a file", args: args{"path": "go.mod/x"}, wantErr: true,
			want: "no such file or directory: go.mod/x"},
		{name: "no path", args: args{"path": ""}, wantErr: true, want: "path is required"},
		{name: "missing path", args: args{}, wantErr: true, want: `invalid arguments: missing required argument "path" (at /path)`},
		{name: "negative offset", args: args{"path": "go.mod", "offset": -1}, wantErr: true,
			want: "offset and limit must be positive"},
	})
}

func TestReadFileCutsAtCharacter(t *testing.T) {
	dir := t.TempDir()
	// 1999 ASCII bytes, then two-byte characters: the cut at 2000 bytes
	// falls inside one and must step back.
	line := strings.Repeat("a", 1999) + strings.Repeat("é", 10)
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	res := run(t, open(t, dir), "read_file", args{"path": "f.txt"})
	want := fmt.Sprintf("%6d\t%s … [line cut: %d bytes]", 1, strings.Repeat("a", 1999), len(line))
	if res.Content != want {
		t.Errorf("got %q\nwant %q", res.Content[len(res.Content)-40:], want[len(want)-40:])
	}
}

// countdown is a context that ends after its Err has been asked n times:
// it shows how often a tool looks at its context.
type countdown struct {
	context.Context
	n int
}

func (c *countdown) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestReadFileLooksAtContext reads a file of one 8 MiB line with a context
// that ends after the first look: the read must stop, not read on to the
// end of the line. read_file used to look every 4,096 lines, so a 2 GiB
// one-line file ignored a 100 ms deadline for 4.45 s.
func TestReadFileLooksAtContext(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"one-line.txt": strings.Repeat("a", 8<<20)})
	tl, _ := open(t, dir).Tool("read_file")
	ctx := &countdown{Context: context.Background(), n: 1}
	res, err := tl.Run(ctx, json.RawMessage(`{"path": "one-line.txt"}`))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("read_file = %.80q, %v; want context.Canceled", res.Content, err)
	}
}

// TestBinaryAnywhere puts a NUL byte after 100 KB of text: the file is
// binary, and no tool shows or edits it as text.
func TestBinaryAnywhere(t *testing.T) {
	dir := t.TempDir()
	text := strings.Repeat("needle in a text line\n", 5000)
	writeFiles(t, dir, map[string]string{"late.bin": text + "\x00" + text, "a.txt": "needle\n"})
	w := open(t, dir)
	for _, c := range []struct {
		tool string
		args args
		want string
	}{
		{"read_file", args{"path": "late.bin"}, "late.bin is a binary file; read_file shows text files only"},
		{"read_file", args{"path": "late.bin", "limit": 1}, "late.bin is a binary file; read_file shows text files only"},
		{"grep", args{"pattern": "needle", "path": "late.bin"}, "late.bin is a binary file"},
		{"edit_file", args{"path": "late.bin", "old_string": "needle", "new_string": "pin", "replace_all": true}, "late.bin is a binary file; edit_file edits text files only"},
	} {
		res := run(t, w, c.tool, c.args)
		if !res.IsError || res.Content != c.want {
			t.Errorf("%s(%v) = %.80q; want the error %q", c.tool, c.args, res.Content, c.want)
		}
	}
	if res := run(t, w, "grep", args{"pattern": "needle"}); res.Content != "a.txt:1: needle" {
		t.Errorf("grep = %.200q; want only a.txt", res.Content)
	}
}
