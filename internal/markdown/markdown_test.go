package markdown

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestFences(t *testing.T) {
	doc := Parse("# Title\n\n```sh\nptk run \"x\"\n```\n\n~~~\n```\nstill inside\n~~~\n\n````markdown\n```sh\nnested\n```\n````\n")
	if len(doc.Problems) != 0 {
		t.Fatalf("problems: %v", doc.Problems)
	}
	if len(doc.Fences) != 3 {
		t.Fatalf("fences: %+v", doc.Fences)
	}
	if f := doc.Fences[0]; f.Info != "sh" || f.Line != 3 || !slices.Equal(f.Lines, []string{`ptk run "x"`}) {
		t.Errorf("first fence: %+v", f)
	}
	if f := doc.Fences[1]; f.Info != "" || !slices.Equal(f.Lines, []string{"```", "still inside"}) {
		t.Errorf("a ``` line inside a ~~~ fence closes nothing: %+v", f)
	}
	if f := doc.Fences[2]; f.Info != "markdown" || len(f.Lines) != 3 {
		t.Errorf("a longer fence holds a shorter one: %+v", f)
	}
}

// The README's old mistake: a block never closed swallows the heading
// after it, and the next block's opening fence cannot close it.
func TestFenceProblems(t *testing.T) {
	doc := Parse("## react\n\n```sh\nptk react \"goal\" \\\n  [--json]\n## `ptk distill`\n\nText.\n\n```sh\nptk distill x\n```\n")
	want := []string{
		"line 10: an opening fence (```sh) inside the sh block opened at line 3: is that block's closing fence missing?",
	}
	var got []string
	for _, p := range doc.Problems {
		got = append(got, p.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems %q, want %q", got, want)
	}
	if len(doc.Headings) != 1 {
		t.Errorf("the heading inside the block was read: %+v", doc.Headings)
	}
	doc = Parse("text\n\n```go\nfunc f() {}\n")
	if len(doc.Problems) != 1 || doc.Problems[0].String() != "line 3: the go block opened here is never closed" {
		t.Errorf("unclosed: %v", doc.Problems)
	}
	// A closing fence may be longer than its opener, not shorter, and
	// carries no info string.
	doc = Parse("````\ncode\n```\nmore\n`````\n")
	if len(doc.Problems) != 0 || len(doc.Fences) != 1 || len(doc.Fences[0].Lines) != 3 {
		t.Errorf("%+v %v", doc.Fences, doc.Problems)
	}
}

func TestHeadingsAndAnchors(t *testing.T) {
	doc := Parse("# ptk — tool calling for any LLM\n## `ptk run`\n### Pointing it at a model\n## Ollama's context, v1.2\n## [Link](x.md) and **bold**\n## `ptk run`\n#no heading\n")
	var got []string
	for _, h := range doc.Headings {
		got = append(got, h.Anchor)
	}
	want := []string{"ptk--tool-calling-for-any-llm", "ptk-run", "pointing-it-at-a-model", "ollamas-context-v12", "link-and-bold", "ptk-run-1"}
	if !slices.Equal(got, want) {
		t.Errorf("anchors %q, want %q", got, want)
	}
}

func TestLinksAndSpans(t *testing.T) {
	doc := Parse("See [the docs](docs/run.md#approval), ![a](img.png \"t\") and [`x`](https://example.com).\n" +
		"Not a link: `[a](b.md)`. Code: ``a ` b`` and `ptk run --yes`.\n[ref]: docs/ref.md\n```\n[in](fence.md)\n```\n")
	var links []string
	for _, l := range doc.Links {
		links = append(links, l.Target)
	}
	if want := []string{"docs/run.md#approval", "img.png", "https://example.com", "docs/ref.md"}; !slices.Equal(links, want) {
		t.Errorf("links %q, want %q", links, want)
	}
	var spans []string
	for _, s := range doc.Spans {
		spans = append(spans, s.Text)
	}
	if want := []string{"x", "[a](b.md)", "a ` b", "ptk run --yes"}; !slices.Equal(spans, want) {
		t.Errorf("spans %q, want %q", spans, want)
	}
}

// TestRepository checks every Markdown file of the repository as GitHub
// will show it: its fences balanced, its relative links and their anchors
// there, none leading out of the repository.
func TestRepository(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, filepath.Join(root, "README.md")) {
		t.Fatalf("no README.md among %v", files)
	}
	docs := map[string]*Doc{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = Parse(string(data))
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		doc := docs[f]
		for _, p := range doc.Problems {
			t.Errorf("%s:%d: %s", rel, p.Line, p.Msg)
		}
		for _, l := range doc.Links {
			if msg := checkLink(root, f, l.Target, docs); msg != "" {
				t.Errorf("%s:%d: link %s: %s", rel, l.Line, l.Target, msg)
			}
		}
	}
}

// checkLink says what is wrong with a link from file, or "".
func checkLink(root, file, target string, docs map[string]*Doc) string {
	u, err := url.Parse(target)
	if err != nil {
		return err.Error()
	}
	if u.Scheme != "" || u.Host != "" {
		return "" // another site: not checked here
	}
	path, frag := u.Path, u.Fragment
	dest := file
	if path != "" {
		if strings.HasPrefix(path, "/") {
			return "an absolute path: make it relative to the file"
		}
		dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
		if r, err := filepath.Rel(root, dest); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "leads out of the repository"
		}
		if _, err := os.Stat(dest); err != nil {
			return "no such file"
		}
	}
	if frag == "" {
		return ""
	}
	doc, ok := docs[dest]
	if !ok {
		return "" // an anchor in a file that is not Markdown: not checked
	}
	for _, h := range doc.Headings {
		if h.Anchor == frag {
			return ""
		}
	}
	var have []string
	for _, h := range doc.Headings {
		have = append(have, h.Anchor)
	}
	return "no heading has the anchor #" + frag + " (there are: " + strings.Join(have, ", ") + ")"
}

func TestCheckLink(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "docs"), 0o755)
	readme, page := filepath.Join(dir, "README.md"), filepath.Join(dir, "docs", "run.md")
	os.WriteFile(readme, nil, 0o644)
	os.WriteFile(page, nil, 0o644)
	docs := map[string]*Doc{readme: Parse("# ptk\n## Install\n"), page: Parse("# ptk run\n## Approval\n")}
	for _, tc := range []struct{ from, target, want string }{
		{readme, "docs/run.md", ""},
		{readme, "docs/run.md#approval", ""},
		{readme, "#install", ""},
		{page, "../README.md#install", ""},
		{readme, "https://example.com/x#y", ""},
		{readme, "docs/chat.md", "no such file"},
		{readme, "docs/run.md#approvals", "no heading has the anchor #approvals (there are: ptk-run, approval)"},
		{readme, "#nothing", "no heading has the anchor #nothing (there are: ptk, install)"},
		{readme, "../shared/STYLE.md", "leads out of the repository"},
		{page, "/docs/run.md", "an absolute path: make it relative to the file"},
	} {
		if got := checkLink(dir, tc.from, tc.target, docs); got != tc.want {
			t.Errorf("%s from %s: %q, want %q", tc.target, filepath.Base(tc.from), got, tc.want)
		}
	}
}
