package fs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The attack: glob and grep are read-only, so they run without asking
// (and in ptk serve --tools for any client). A pattern of alternatives
// that all match, {a,a}{a,a}…, costs doublestar twice as much per group:
// 21 groups took 0.4 s for one path, 40 would take days, for each file of
// the workspace, on a goroutine no timeout can stop. A pattern whose
// alternatives multiply past a bound is refused before anything is
// matched.
func TestGlobAlternativesBomb(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("a", 60) // a name the bomb's alternatives all start on
	for _, name := range []string{long, "sub/" + long, "b.go", "c/d.go"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("needle\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := open(t, dir)
	bomb := strings.Repeat("{a,a}", 40) + "x"
	nested := strings.Repeat("{a,", 30) + "b" + strings.Repeat("}", 30) + strings.Repeat("{a,{a,a}}", 30)
	for _, c := range []struct {
		tool string
		args args
	}{
		{"glob", args{"pattern": bomb}},
		{"glob", args{"pattern": "**/" + bomb}},
		{"glob", args{"pattern": nested}},
		{"grep", args{"pattern": "needle", "include": bomb}},
	} {
		done := make(chan string, 1)
		go func() {
			res := run(t, w, c.tool, c.args)
			done <- res.Content
		}()
		select {
		case got := <-done:
			if !strings.Contains(got, "alternatives") {
				t.Errorf("%s %v: %q, want a refusal that says why", c.tool, c.args, got)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s %v: still matching after 5 s", c.tool, c.args)
		}
	}
	// Ordinary alternatives still work.
	if res := run(t, w, "glob", args{"pattern": "**/*.{go,txt}"}); !strings.Contains(res.Content, "c/d.go") {
		t.Errorf("**/*.{go,txt}: %q", res.Content)
	}
}

func TestAlternativesCount(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    int
	}{
		{"*.go", 1},
		{"*.{go,ts}", 2},
		{"{a,b}/{c,d,e}", 6},
		{"{a,{b,c}}", 3},
		{"{a,b{c,d}}", 3},
		{`\{a,b\}`, 1},
		{"[{]a,b[}]", 1},
		{"[!{]{x,y}", 2},
		{"{,a}", 2},
		{strings.Repeat("{a,a}", 10), 1024},
		{strings.Repeat("{a,a}", 11), maxAlternatives + 1},
		{strings.Repeat("{a,a}", 400), maxAlternatives + 1},
	} {
		if got, _ := alternatives(c.pattern, 0, false); got != c.want {
			t.Errorf("alternatives(%q) = %d, want %d", c.pattern, got, c.want)
		}
	}
}
