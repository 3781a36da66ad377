package fs

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestGlob(t *testing.T) {
	dir := fixture(t)
	for i := range 510 {
		p := filepath.Join(dir, "gen", fmt.Sprintf("d%d", i%10), fmt.Sprintf("f%03d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := open(t, dir)
	runCases(t, w, "glob", []toolCase{
		{name: "all go files", args: args{"pattern": "**/*.go", "path": "."},
			has: []string{"gen/d0/f000.go\ngen/d0/f010.go\n", "gen/d9/f409.go\n(14 more matches not shown; narrow the pattern or set path)"}},
		{name: "all go files but gen", args: args{"pattern": "[!g]*/**/*.go"},
			want: "internal/server/server.go\ninternal/server/server_test.go"},
		{name: "everything outside gen", args: args{"pattern": "{*,[!g]*/**}"}, want: `.gitignore
.ptkignore
README.md
assets/logo.png
big.txt
crlf.txt
docs/.gitignore
docs/notes.log
empty.txt
go.mod
internal/server/server.go
internal/server/server_test.go
internal/server/testdata/wide.txt
latin1.txt
link.go
main.go
sub/dist/kept.js
web/.gitignore
web/keep.js
web/src/index.ts`},
		{name: "path order", args: args{"pattern": "*/f00[0-2].go", "path": "gen"},
			want: "gen/d0/f000.go\ngen/d1/f001.go\ngen/d2/f002.go"},
		{name: "relative to path", args: args{"pattern": "server/*.go", "path": "internal"},
			want: "internal/server/server.go\ninternal/server/server_test.go"},
		{name: "one level", args: args{"pattern": "*.go"}, want: "link.go\nmain.go"},
		{name: "literal", args: args{"pattern": "go.mod"}, want: "go.mod"},
		{name: "nested gitignore", args: args{"pattern": "web/**/*.{js,ts}"},
			want: "web/keep.js\nweb/src/index.ts"},
		{name: "ignored skipped", args: args{"pattern": "**/*.log"}, want: "docs/notes.log"},
		{name: "named ignored dir", args: args{"pattern": "**/*.js", "path": "node_modules"},
			want: "node_modules/left-pad/index.js"},
		{name: "pattern names ignored dir", args: args{"pattern": "build/*"}, want: "build/out.txt"},
		{name: "no match", args: args{"pattern": "**/*.rs"},
			want: "No files match **/*.rs in .. Ignored files were skipped; name an ignored directory in path to search it."},
		{name: "no such base", args: args{"pattern": "nope/**"}, want: "No files match nope/** in .."},
		{name: "bad pattern", args: args{"pattern": "[a-"}, wantErr: true, want: "invalid glob pattern: [a-"},
		{name: "dotdot", args: args{"pattern": "../*"}, wantErr: true,
			want: `the pattern must be relative and may not contain ".."; set path to search elsewhere`},
		{name: "absolute pattern", args: args{"pattern": "/etc/*"}, wantErr: true,
			want: `the pattern must be relative and may not contain ".."; set path to search elsewhere`},
		{name: "path is a file", args: args{"pattern": "*", "path": "go.mod"}, wantErr: true,
			want: "go.mod is a file, not a directory; use read_file to read it"},
		{name: "no pattern", args: args{"pattern": ""}, wantErr: true, want: "pattern is required"},
		{name: "missing pattern", args: args{}, wantErr: true, want: `invalid arguments: missing required argument "pattern" (at /pattern)`},
	})
}
