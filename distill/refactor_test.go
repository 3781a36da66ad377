package distill

import (
	"context"
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

// compiles type-checks and vets src in a module next to this one.
func compiles(t *testing.T, src []byte) {
	t.Helper()
	root, _ := filepath.Abs("..")
	ws, err := newWorkspace(workDir, root, time.Minute, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.remove()
	ws.write("reviews.go", string(src))
	if r := ws.run(context.Background(), true, nil, "go", "vet", "."); r.Err != nil {
		t.Fatalf("the file does not compile: %v\n%s\n%s", r.Err, r.Output, src)
	}
}

func TestRefactor(t *testing.T) {
	rep := &Report{Accepted: true, Code: goodCode, Rounds: []Round{{Accepted: true, Score: &Score{}}}}
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
