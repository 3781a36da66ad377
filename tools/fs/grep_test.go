package fs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGrep(t *testing.T) {
	dir := fixture(t)
	var many strings.Builder
	for i := 1; i <= 250; i++ {
		fmt.Fprintf(&many, "match %d\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "many.txt"), []byte(many.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	w := open(t, dir)
	runCases(t, w, "grep", []toolCase{
		{name: "go funcs", args: args{"pattern": `^func \w+`, "include": "*.go"}, want: `internal/server/server.go:4: func Run() {
internal/server/server.go:8: func listen(addr string) {}
internal/server/server_test.go:5: func TestRun(t *testing.T) {}
main.go:5: func main() {`},
		{name: "ignore rules", args: args{"pattern": `func`}, want: `docs/notes.log:1: func notes are kept
internal/server/server.go:4: func Run() {
internal/server/server.go:8: func listen(addr string) {}
internal/server/server_test.go:5: func TestRun(t *testing.T) {}
main.go:5: func main() {
sub/dist/kept.js:1: function kept() {}
web/keep.js:1: function keep() {}
web/src/index.ts:1: export function index() {}`},
		{name: "include path glob", args: args{"pattern": "func", "include": "web/**/*.ts"},
			want: "web/src/index.ts:1: export function index() {}"},
		{name: "include relative to path", args: args{"pattern": "func", "path": "web", "include": "src/*.ts"},
			want: "web/src/index.ts:1: export function index() {}"},
		{name: "one file", args: args{"pattern": "listen", "path": "internal/server/server.go"},
			want: "internal/server/server.go:5: \tlisten(\":8080\")\ninternal/server/server.go:8: func listen(addr string) {}"},
		{name: "named ignored file", args: args{"pattern": "started", "path": "app.log"},
			want: "app.log:1: log: started"},
		{name: "named ignored dir", args: args{"pattern": "leftPad", "path": "node_modules"},
			want: "node_modules/left-pad/index.js:1: module.exports = function leftPad() {}"},
		{name: "case-insensitive", args: args{"pattern": "(?i)^A SMALL"}, want: "README.md:3: A small service."},
		{name: "crlf line end", args: args{"pattern": "^two$"}, want: "crlf.txt:2: two"},
		{name: "non-utf8", args: args{"pattern": "caf.", "path": "latin1.txt"}, want: "latin1.txt:1: caf\uFFFD cr\uFFFDme"},
		{name: "long line", args: args{"pattern": "needle"},
			has: []string{"internal/server/testdata/wide.txt:2: …wide wide ", "wide needle ééé", "é…"}},
		{name: "cap", args: args{"pattern": `^match \d+$`},
			has: []string{"many.txt:200: match 200\n(stopped after 200 matches; there are more: narrow the pattern or the path)"}},
		{name: "no match", args: args{"pattern": "zebra", "path": "internal"},
			want: "No matches for zebra in internal (3 files searched)."},
		{name: "no match, ignored skipped", args: args{"pattern": "hunter2"},
			has: []string{"No matches for hunter2 in . (", "Ignored files were skipped"}},
		{name: "binary skipped", args: args{"pattern": "IHDR"}, has: []string{"No matches"}},
		{name: "binary named", args: args{"pattern": "IHDR", "path": "assets/logo.png"}, wantErr: true,
			want: "assets/logo.png is a binary file"},
		{name: "bad regexp", args: args{"pattern": "func("}, wantErr: true,
			want: "invalid regexp: error parsing regexp: missing closing ): `func(`"},
		{name: "bad include", args: args{"pattern": "x", "include": "[a-"}, wantErr: true,
			want: "invalid include glob: [a-"},
		{name: "missing path", args: args{"pattern": "x", "path": "nope"}, wantErr: true,
			want: "no such file or directory: nope"},
		{name: "no pattern", args: args{"pattern": ""}, wantErr: true, want: "pattern is required"},
		{name: "missing pattern", args: args{}, wantErr: true, want: `invalid arguments: missing required argument "pattern" (at /pattern)`},
	})
}

// TestPathOrder checks that glob and grep list files sorted by path, which
// is not the order of a walk that sorts each directory by name.
func TestPathOrder(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a/b.go", "a.go", "a-b/c.go", "a/a/z.go", "a0.go", "B.go"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := open(t, dir)
	want := "B.go\na-b/c.go\na.go\na/a/z.go\na/b.go\na0.go"
	if got := run(t, w, "glob", args{"pattern": "**/*.go"}).Content; got != want {
		t.Errorf("glob:\n%s\nwant:\n%s", got, want)
	}
	want = strings.ReplaceAll(want, ".go", ".go:1: package x")
	if got := run(t, w, "grep", args{"pattern": "package"}).Content; got != want {
		t.Errorf("grep:\n%s\nwant:\n%s", got, want)
	}
}

// BenchmarkGrep searches a generated tree of 2,000 Go-like files (40
// directories of 50 files, about 100 lines each).
func BenchmarkGrep(b *testing.B) {
	dir := b.TempDir()
	var size int64
	for i := range 2000 {
		var src strings.Builder
		fmt.Fprintf(&src, "package p%d\n\nimport \"fmt\"\n\n", i/50)
		for j := range 16 {
			fmt.Fprintf(&src, "// handle%d_%d serves a request.\nfunc handle%d_%d(w Writer, r *Request) error {\n\tif r == nil {\n\t\treturn fmt.Errorf(\"no request\")\n\t}\n\treturn nil\n}\n\n", i, j, i, j)
		}
		if i%100 == 0 {
			src.WriteString("// TODO: the needle is here\n")
		}
		p := filepath.Join(dir, fmt.Sprintf("pkg%02d", i/50), fmt.Sprintf("file%04d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		size += int64(src.Len())
	}
	w := open(b, dir)
	tl, _ := w.Tool("grep")
	for _, bc := range []struct {
		name, args string
		full       bool // the search reads the whole tree
	}{
		{"literal", `{"pattern": "needle"}`, true},                  // 20 matches
		{"regexp", `{"pattern": "func handle19\\d\\d_3\\("}`, true}, // 100 matches, literal prefix
		{"inner-literal", `{"pattern": "\\bneedle\\b"}`, true},      // a literal, not a prefix
		{"case-insensitive", `{"pattern": "(?i)NEEDLE"}`, true},     // no literal: every line
		{"capped", `{"pattern": "return"}`, false},                  // stops after 200 matches
	} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.full {
				b.SetBytes(size)
			}
			for b.Loop() {
				res, err := tl.Run(context.Background(), json.RawMessage(bc.args))
				if err != nil || res.IsError || strings.HasPrefix(res.Content, "No matches") {
					b.Fatal(err, res.Content)
				}
			}
		})
	}
	b.Logf("tree: 2000 files, %.1f MB", float64(size)/1e6)
}
