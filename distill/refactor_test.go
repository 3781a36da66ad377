package distill

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const userFile = `package reviews

import (
	"context"

	"github.com/ptkit/ptk/ptool"
)

// Review is what a customer wrote.
type Review struct {
	Text string ` + "`json:\"text\"`" + `
}

// Sentiment is the tone.
type Sentiment = string

// classify is asked about each review.
var classify = ptool.New[Review, Sentiment]("classify", "Classify the tone of a review.") // the model comes later

func use(ctx context.Context) (Sentiment, error) { return classify.Call(ctx, Review{Text: "x"}) }

// Shout says the review's text loudly,
// or leaves it to the model when there is none.
func Shout(ctx context.Context, in Review) (string, error) {
	if in.Text == "" {
		return "", ptool.ErrFallback
	}
	return in.Text + "!", nil
}
`

// compiles type-checks and vets src (ptk's own output, not a model's) in
// a module that requires this one.
func compiles(t *testing.T, src []byte) {
	t.Helper()
	root, _ := filepath.Abs("..")
	dir := t.TempDir()
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module reviews\n\ngo 1.26.0\n\nrequire github.com/ptkit/ptk v0.0.0-00010101000000-000000000000\n\nreplace github.com/ptkit/ptk => "+root+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "reviews.go"), src, 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "vet", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the file does not compile: %v\n%s\n%s", err, out, src)
	}
}

func TestRefactor(t *testing.T) {
	rep := &Report{Accepted: true, Code: goodCode, Rounds: []Round{{Accepted: true, Sealed: &Score{}}}}
	rep.Types, _ = GoTypes(target.Input, target.Output)
	gen, err := File("classify", target, rep)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Refactor([]byte(userFile), "classify", gen)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`var classify = ptool.Distill(classifyCode, ptool.New[Review, Sentiment]("classify", "Classify the tone of a review.")) // the model comes later`,
		"// classify is asked about each review.", "// Distilled answers the reviews that say love or hate.",
		"func classifyCode(ctx context.Context, in Review) (Sentiment, error) {", "\t\"strings\"\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the rewritten file lacks %q:\n%s", want, got)
		}
	}
	compiles(t, got)
	if _, err := Refactor(got, "classify", gen); err == nil || !strings.Contains(err.Error(), "already distilled") {
		t.Errorf("distilling twice: %v", err)
	}
	if _, err := Refactor([]byte(userFile), "nothing", gen); err == nil {
		t.Error("no error for a ptool the file does not declare")
	}

}

// TestRefactorScreens: the code ptk refactor distill would merge into a
// user's file passes the same screen as before it compiled: a file edited
// to import os/exec and run it in init, or a helper that a package-level
// variable calls, is refused, and nothing is merged.
func TestRefactorScreens(t *testing.T) {
	rep := &Report{Accepted: true, Code: goodCode, Rounds: []Round{{Accepted: true, Sealed: &Score{}}}}
	rep.Types, _ = GoTypes(target.Input, target.Output)
	gen, err := File("classify", target, rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ edit, want string }{
		{"\nfunc init() { exec.Command(\"sh\", \"-c\", \"touch /tmp/pwned\").Run() }\n", "imports os/exec"},
		{"\nvar started = boot()\n\nfunc boot() int { return 1 }\n", "may not call boot"},
		{"\n//go:linkname now time.now\nfunc now() (int64, int32, int64)\n", "the directive \"//go:linkname\""},
	} {
		edited := strings.Replace(string(gen), "import (\n", "import (\n\t\"os/exec\"\n", 1)
		if !strings.Contains(c.edit, "exec.") {
			edited = string(gen)
		}
		edited += c.edit
		out, err := Refactor([]byte(userFile), "classify", []byte(edited))
		if !errors.Is(err, ErrScreened) || !strings.Contains(err.Error(), c.want) || out != nil {
			t.Errorf("%q: %v", c.want, err)
		}
	}
	// File refuses to write such code too.
	bad := *rep
	bad.Code = strings.Replace(goodCode, "import (\n", "import (\n\t\"os\"\n", 1) + "\nvar _ = os.Getenv\n"
	if _, err := File("classify", target, &bad); !errors.Is(err, ErrScreened) {
		t.Errorf("File with os: %v", err)
	}
}
