package ptool_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
)

type order struct {
	Text string `json:"text"`
}

// TestDistillOutcomes: a distilled function in each of its four outcomes.
func TestDistillOutcomes(t *testing.T) {
	bug := errors.New("index out of range in my parser")
	code := func(_ context.Context, in order) ([]string, error) {
		switch {
		case strings.Contains(in.Text, "pizza"):
			return []string{"pizza"}, nil
		case in.Text == "bug":
			return nil, bug
		case in.Text == "panic":
			var m map[string]int
			m["x"]++ // a nil map: panics
		case in.Text == "bad":
			return []string{}, nil
		}
		return nil, fmt.Errorf("no known item in %q: %w", in.Text, ptool.ErrFallback)
	}
	m := llmtest.New(llmtest.Text(`<answer>["sushi"]</answer>`))
	var recs []*ptool.Record
	fallback := ptool.New[order, []string]("extract_items", "List the food items ordered.", ptool.WithModel(m),
		ptool.WithObserver(func(r *ptool.Record) { recs = append(recs, r) }))
	d := ptool.Distill(code, fallback)
	ctx := context.Background()

	if got, err := d.Call(ctx, order{"one pizza please"}); err != nil || strings.Join(got, ",") != "pizza" {
		t.Errorf("code answer = %q, %v", got, err)
	}
	if got, err := d.Call(ctx, order{"sushi for two"}); err != nil || strings.Join(got, ",") != "sushi" {
		t.Errorf("fallback answer = %q, %v", got, err)
	}
	if _, err := d.Call(ctx, order{"bug"}); !errors.Is(err, bug) {
		t.Errorf("a bug: err = %v, want the code's error", err)
	}
	if _, err := d.Call(ctx, order{"panic"}); err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Errorf("a panic: err = %v", err)
	}
	if got, want := d.Stats(), (ptool.Stats{Calls: 4, Code: 1, FellBack: 1, Model: 1, Failed: 2}); got != want {
		t.Errorf("Stats() = %+v, want %+v", got, want)
	}
	if len(m.Requests()) != 1 {
		t.Errorf("the model was asked %d times, want once", len(m.Requests()))
	}
	if len(recs) != 4 || recs[0].Source != ptool.SourceCode || recs[1].Source != ptool.SourceModel || !recs[1].FellBack ||
		string(recs[0].Output) != `["pizza"]` || recs[2].Err == "" {
		t.Errorf("records = %+v", recs)
	}
}

// TestDistillChecksCode: the code's answer is checked like a model's.
func TestDistillChecksCode(t *testing.T) {
	type label struct {
		Text string `json:"text"`
	}
	fallback := ptool.New[label, string]("label", "Label.", ptool.WithOutputEnum("spam", "ham"), ptool.WithModel(llmtest.New()))
	d := ptool.Distill(func(context.Context, label) (string, error) { return "eggs", nil }, fallback)
	if _, err := d.Call(context.Background(), label{"x"}); err == nil || !strings.Contains(err.Error(), "does not fit the output schema") {
		t.Errorf("err = %v", err)
	}
	if s := d.Stats(); s.Failed != 1 || s.Code != 0 {
		t.Errorf("Stats() = %+v", s)
	}
	// a nil slice is an empty list, not null
	items := ptool.New[label, []string]("items", "Items.", ptool.WithModel(llmtest.New()))
	di := ptool.Distill(func(context.Context, label) ([]string, error) { return nil, nil }, items)
	if _, err := di.Call(context.Background(), label{"x"}); err != nil {
		t.Errorf("nil slice: %v", err)
	}
}
