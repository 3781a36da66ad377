package distill

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goTest runs go test in a temporary module that holds files and requires
// this ptk module.
func goTest(t *testing.T, files map[string]string) {
	t.Helper()
	root, _ := filepath.Abs("..")
	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	files["go.mod"] = "module reviews\n\ngo 1.26.0\n\nrequire github.com/ptkit/ptk v0.0.0\n\nreplace github.com/ptkit/ptk => " + root + "\n"
	files["go.sum"] = string(sum)
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-mod=mod", "-count=1", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOPROXY=off", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test: %v\n%s\n%s", err, out, files["reviews.go"])
	}
}

// TestExpand: the expanded ptool is answered by the model; with its code
// kept, by the code first and the model where the code falls back.
func TestExpand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a module")
	}
	exp, err := Expand([]byte(userFile), "Shout", ExpandOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `func NewShoutPtool(opts ...ptool.Option) *ptool.PTool[Review, string] {
	return ptool.New[Review, string]("shout", "Shout says the review's text loudly,\nor leaves it to the model when there is none.", opts...)
}`
	if !strings.Contains(string(exp), want) || !strings.HasPrefix(string(exp), userFile) {
		t.Errorf("expanded:\n%s", exp)
	}
	kept, err := Expand([]byte(userFile), "Shout", ExpandOptions{KeepCode: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(kept), "func NewShoutPtool(opts ...ptool.Option) *ptool.Distilled[Review, string] {\n\treturn ptool.Distill(Shout, ptool.New[Review, string](") {
		t.Errorf("expanded, code kept:\n%s", kept)
	}
	const test = `package reviews

import (
	"context"
	"testing"

	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
)

func TestModelAnswers(t *testing.T) {
	m := llmtest.New(llmtest.Text("<answer>\"LOUD\"</answer>"), llmtest.Text("<answer>\"QUIET\"</answer>"))
	p := NewShoutPtool(ptool.WithModel(m))
	got, err := p.Call(context.Background(), Review{Text: "hi"})
	if err != nil || got != WANT || len(m.Requests()) != CALLS {
		t.Fatalf("got %q, %v after %d model calls", got, err, len(m.Requests()))
	}
	if got, err := p.Call(context.Background(), Review{}); err != nil || got != "QUIET" && got != "LOUD" {
		t.Fatalf("with no text: %q, %v", got, err)
	}
	_ = use
}
`
	// the ptool asks the model for every call; with the code kept, the
	// code answers "hi!" and the model only the empty review
	goTest(t, map[string]string{"reviews.go": string(exp), "reviews_test.go": strings.NewReplacer("WANT", `"LOUD"`, "CALLS", "1").Replace(test)})
	goTest(t, map[string]string{"reviews.go": string(kept), "reviews_test.go": strings.NewReplacer("WANT", `"hi!"`, "CALLS", "0").Replace(test)})

	noFallback := strings.Replace(userFile, "return \"\", ptool.ErrFallback", "return \"\", nil", 1)
	if _, err := Expand([]byte(noFallback), "Shout", ExpandOptions{KeepCode: true}); err == nil || !strings.Contains(err.Error(), "never answer") {
		t.Errorf("keeping code that never falls back: %v", err)
	}
	if _, err := Expand([]byte(noFallback), "Shout", ExpandOptions{}); err != nil {
		t.Errorf("expanding code that never falls back: %v", err)
	}
	if _, err := Expand([]byte(userFile), "use", ExpandOptions{}); err == nil || !strings.Contains(err.Error(), "func(context.Context, In) (Out, error)") {
		t.Errorf("expanding a function of another shape: %v", err)
	}
}
