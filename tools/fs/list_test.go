package fs

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestListDir(t *testing.T) {
	dir := fixture(t)
	for _, d := range []string{"emptydir", "many"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1005 {
		if err := os.WriteFile(filepath.Join(dir, "many", fmt.Sprintf("f%04d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := open(t, dir)
	runCases(t, w, "list_dir", []toolCase{
		{name: "root", args: args{}, want: `.gitignore
.ptkignore
README.md
assets/
big.txt
crlf.txt
docs/
empty.txt
emptydir/
go.mod
internal/
latin1.txt
link.go@ -> main.go
linkdir@ -> internal
main.go
many/
sub/
web/
(6 entries hidden by ignore rules)`},
		{name: "nested gitignore re-includes", args: args{"path": "web"},
			want: ".gitignore\nkeep.js\nsrc/\n(1 entry hidden by ignore rules)"},
		{name: "negation of a parent rule", args: args{"path": "docs/"},
			want: ".gitignore\nnotes.log\n(1 entry hidden by ignore rules)"},
		{name: "anchored rule", args: args{"path": "sub/dist"}, want: "kept.js"},
		{name: "symlinked dir", args: args{"path": "linkdir/server"},
			want: "server.go\nserver_test.go\ntestdata/"},
		{name: "named ignored dir", args: args{"path": "node_modules/left-pad"}, want: "index.js"},
		{name: "named .git", args: args{"path": ".git"}, want: "HEAD\nconfig"},
		{name: "ptkignore", args: args{"path": "secrets"}, want: "key.txt"},
		{name: "absolute root", args: args{"path": dir}, has: []string{"go.mod\n"}},
		{name: "empty", args: args{"path": "emptydir"}, want: "(empty directory)"},
		{name: "cap", args: args{"path": "many"}, has: []string{"f0999\n(5 more entries not shown)"}},
		{name: "file", args: args{"path": "go.mod"}, wantErr: true,
			want: "go.mod is a file, not a directory; use read_file to read it"},
		{name: "missing", args: args{"path": "nope"}, wantErr: true, want: "no such file or directory: nope"},
	})
}
