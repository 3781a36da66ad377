package fs

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRule(t *testing.T) {
	for _, c := range []struct {
		line, base, path string
		isDir, match     bool
	}{
		{"*.log", ".", "a.log", false, true},
		{"*.log", ".", "x/y/a.log", false, true},
		{"*.log", ".", "a.log.txt", false, false},
		{"build/", ".", "x/build", true, true},
		{"build/", ".", "x/build", false, false},
		{"/dist", ".", "dist", true, true},
		{"/dist", ".", "sub/dist", true, false},
		{"doc/*.txt", ".", "doc/a.txt", false, true},
		{"doc/*.txt", ".", "doc/x/a.txt", false, false},
		{"doc/*.txt", ".", "x/doc/a.txt", false, false},
		{"**/tmp", ".", "tmp", true, true},
		{"**/tmp", ".", "a/b/tmp", true, true},
		{"a/**/b", ".", "a/b", false, true},
		{"a/**/b", ".", "a/x/y/b", false, true},
		{"a/**/b", ".", "a/xb", false, false},
		{"logs/**", ".", "logs", true, false},
		{"logs/**", ".", "logs/x/y", false, true},
		{"a**b", ".", "axxb", false, true},
		{"a**b", ".", "ax/xb", false, false},
		{"?.go", ".", "a.go", false, true},
		{"?.go", ".", "ab.go", false, false},
		{"[a-c].go", ".", "b.go", false, true},
		{"[!a-c].go", ".", "b.go", false, false},
		{"[!a-c].go", ".", "d.go", false, true},
		{"[]].go", ".", "].go", false, true},
		{"[[:digit:]x].go", ".", "7.go", false, true},
		{"[a-", ".", "[a-", false, true},
		{`\#hash`, ".", "#hash", false, true},
		{`\!bang`, ".", "!bang", false, true},
		{`sp\ `, ".", "sp ", false, true},
		{"trail   ", ".", "trail", false, true},
		{"crlf\r", ".", "crlf", false, true},
		{"a.b", ".", "axb", false, false},
		{"(x)+", ".", "(x)+", false, true},
		{"é*", ".", "été", false, true},
		{"*.js", "web", "web/a.js", false, true},
		{"/a.js", "web", "web/a.js", false, true},
		{"/a.js", "web", "web/x/a.js", false, false},
		{"x/a.js", "web", "web/x/a.js", false, true},
	} {
		r, ok := parseRule(c.base, c.line)
		if !ok {
			t.Errorf("parseRule(%q) failed", c.line)
			continue
		}
		if got := r.match(c.path, c.isDir); got != c.match {
			t.Errorf("%q (in %s) matches %s (dir %v) = %v, want %v; regexp %s", c.line, c.base, c.path, c.isDir, got, c.match, r.re)
		}
	}
	for _, line := range []string{"", "   ", "# comment", "/", "!"} {
		if _, ok := parseRule(".", line); ok {
			t.Errorf("parseRule(%q) is a rule", line)
		}
	}
}

// gitFixture holds the ignore idioms where simpler matchers part from git
// (go-git's gitignore package gets the first, second and fourth wrong).
var gitFixture = map[string]string{
	// Ignore everything but Go files.
	"a/.gitignore":  "*\n!*/\n!*.go\n!.gitignore\n",
	"a/src/main.go": "", "a/src/x.txt": "", "a/top.go": "", "a/top.md": "",
	// A negation naming a directory does not re-include its files.
	"b/.gitignore":      "*.txt\n!docs/keep\n",
	"b/docs/keep/a.txt": "", "b/docs/keep/a.md": "", "b/docs/z.txt": "",
	// Nothing inside an excluded directory can be re-included.
	"c/.gitignore":     "build/\n!build/keep.txt\n",
	"c/build/keep.txt": "", "c/build/o.bin": "", "c/main.c": "",
	// "dir/**" matches what is inside, not the directory.
	"d/.gitignore":         "logs/**\n!logs/important.log\n",
	"d/logs/important.log": "", "d/logs/x.log": "",
	// "**" in all positions, and anchoring.
	"e/.gitignore": "x/**/z\n**/tmp\n/rootonly\n",
	"e/x/y/z/f":    "", "e/x/z/f": "", "e/q/tmp/f": "", "e/x/y/ok": "", "e/rootonly": "", "e/x/rootonly/f": "",
	// Escapes and trailing spaces, comments and CRLF line ends.
	".gitignore": "# comment\r\n\\#hash\r\nsp\\ \r\n*.o\r\n",
	"#hash":      "", "sp ": "", "keep": "", "x.o": "", "f/y.o": "",
	// A deeper file overrides a shallower one; rules apply below their directory.
	"g/.gitignore":   "*.gen\n",
	"g/h/.gitignore": "!*.gen\n/local\n",
	"g/a.gen":        "", "g/h/b.gen": "", "g/h/local": "", "g/local": "", "g/h/i/local": "",
	// .git/info/exclude applies, below every .gitignore.
	".git/info/exclude": "*.excl\n",
	"z.excl":            "", "g/h/z.excl": "",
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIgnoreMatchesGit compares the files glob finds with the files git
// does not ignore, when git is installed.
func TestIgnoreMatchesGit(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, gitFixture)
	w := open(t, dir)
	got := strings.Split(run(t, w, "glob", args{"pattern": "**"}).Content, "\n")
	want := []string{
		".gitignore",
		"a/.gitignore", "a/src/main.go", "a/top.go",
		"b/.gitignore", "b/docs/keep/a.md",
		"c/.gitignore", "c/main.c",
		"d/.gitignore", "d/logs/important.log",
		"e/.gitignore", "e/x/rootonly/f", "e/x/y/ok",
		"g/.gitignore", "g/h/.gitignore", "g/h/b.gen", "g/h/i/local", "g/local",
		"keep",
	}
	if !slices.Equal(got, want) {
		t.Errorf("glob found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	infoExclude := filepath.Join(dir, ".git", "info", "exclude")
	if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
		t.Fatal(err)
	}
	git("init", "-q")
	if err := os.WriteFile(infoExclude, []byte(gitFixture[".git/info/exclude"]), 0o644); err != nil {
		t.Fatal(err)
	}
	fromGit := strings.Split(strings.TrimSuffix(git("ls-files", "--others", "--exclude-standard", "-z"), "\x00"), "\x00")
	slices.Sort(fromGit)
	if !slices.Equal(fromGit, want) {
		t.Errorf("git finds:\n%s\nwant:\n%s", strings.Join(fromGit, "\n"), strings.Join(want, "\n"))
	}
}

func TestPtkignore(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		".gitignore":     "*.gen\nvendor/\n",
		".ptkignore":     "!keep.gen\nfixtures/\n",
		"a.gen":          "",
		"keep.gen":       "",
		"fixtures/x":     "",
		"sub/.ptkignore": "*.md\n",
		"sub/a.md":       "",
		"sub/b.txt":      "",
		"vendor/v.go":    "",
		"README.md":      "",
	})
	w := open(t, dir)
	want := ".gitignore\n.ptkignore\nREADME.md\nkeep.gen\nsub/.ptkignore\nsub/b.txt"
	if got := run(t, w, "glob", args{"pattern": "**"}).Content; got != want {
		t.Errorf("glob:\n%s\nwant:\n%s", got, want)
	}
}
