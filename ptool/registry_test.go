package ptool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/tool"
)

func TestRegistry(t *testing.T) {
	r := ptool.NewRegistry()
	a := classifier(llmtest.New())
	b := ptool.New[review, string]("label", "Label the review.\nSpam or ham.", ptool.WithOutputEnum("spam", "ham"))
	for _, f := range []ptool.Func{a, ptool.Distill(func(context.Context, review) (string, error) { return "ham", nil }, b)} {
		if err := r.Register(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Register(a); err == nil {
		t.Error("registering a name twice: no error")
	}
	if f, ok := r.Lookup("classify_sentiment"); !ok || f != a {
		t.Error("Lookup(classify_sentiment) failed")
	}
	if _, ok := r.Lookup("nope"); ok {
		t.Error("Lookup(nope) found something")
	}
	want := `- classify_sentiment(text string) -> {sentiment: "positive"|"negative"|"neutral", confidence: number}
    Classify the emotional tone of a product review.
- label(text string) -> "spam"|"ham"
    Label the review.
    Spam or ham.
`
	if got := r.Describe(); got != want {
		t.Errorf("Describe()\n got %q\nwant %q", got, want)
	}
	if specs := r.List(); len(specs) != 2 || specs[1].Name != "label" {
		t.Errorf("List() = %v", specs)
	}
}

// TestAsTool: a ptool in a tool registry, called as an agent would.
func TestAsTool(t *testing.T) {
	p := classifier(llmtest.New(llmtest.Text(`<answer>{"sentiment": "negative", "confidence": 1}</answer>`),
		llmtest.Text(`<cannot_answer>no text</cannot_answer>`)))
	reg, err := tool.NewRegistry(p)
	if err != nil {
		t.Fatal(err)
	}
	tl, ok := reg.Get("classify_sentiment")
	if !ok {
		t.Fatal("not in the registry")
	}
	info := tl.Info()
	if !strings.HasPrefix(info.Description, classifyDoc) || !strings.Contains(info.Description, `Returns {sentiment:`) || !json.Valid(info.Parameters) {
		t.Errorf("Info() = %+v", info)
	}
	res, err := tl.Run(context.Background(), json.RawMessage(`{"text": "awful"}`))
	if err != nil || res.IsError || res.Content != `{"sentiment":"negative","confidence":1}` {
		t.Errorf("Run = %+v, %v", res, err)
	}
	res, err = tl.Run(context.Background(), json.RawMessage(`{"txt": "awful"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "invalid input") {
		t.Errorf("Run with a wrong input = %+v, %v", res, err)
	}
	res, err = tl.Run(context.Background(), json.RawMessage(`{"text": ""}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "no text") {
		t.Errorf("Run when the model abstains = %+v, %v", res, err)
	}
}
