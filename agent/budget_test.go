package agent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
)

// A model that calls a tool on every turn, 1,000 prompt tokens and 40
// completion tokens a call.
func spender(n int) *llmtest.Script {
	var rs []llmtest.Reply
	for i := range n {
		rs = append(rs, llmtest.Reply{Content: ptkCall("get_weather", fmt.Sprintf(`{"city": "C%d"}`, i)), Usage: ptk.Usage{PromptTokens: 1000, CompletionTokens: 40}})
	}
	return llmtest.New(rs...)
}

func TestBudgets(t *testing.T) {
	price := llm.Price{Input: 10, Output: 30} // per million: a call is $0.01 + $0.0012
	cases := []struct {
		name       string
		opts       Options
		iterations int
		toolCalls  int
		msg        string
	}{
		{"tokens, stopped before the call that cannot fit", Options{MaxTokens: 2500}, 2, 2, "needs at least 1000 tokens"},
		{"tokens, a reply past the budget runs no calls", Options{MaxTokens: 1000}, 1, 0, "used 1040 tokens, its budget is 1000"},
		{"cost with a price, stopped ahead", Options{MaxCost: 0.02, Price: &price}, 1, 1, "costs at least $0.0100"},
		{"cost with a priced model", Options{MaxCost: 0.03, Model: llm.Priced(spender(5), price)}, 2, 2, "costs at least $0.0100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var runs atomic.Int32
			o := c.opts
			if o.Model == nil {
				o.Model = spender(5)
			}
			o.Mode, o.Tools = ModePTK, []ptk.Tool{weather(&runs)}
			res, err := Run(context.Background(), Prompt("w"), o)
			if !errors.Is(err, ptk.BudgetExceeded) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v, want BUDGET_EXCEEDED with %q", err, c.msg)
			}
			if res.Iterations != c.iterations || res.TotalToolCalls != c.toolCalls || int(runs.Load()) != c.toolCalls {
				t.Errorf("iterations %d, tool calls %d (ran %d); want %d, %d", res.Iterations, res.TotalToolCalls, runs.Load(), c.iterations, c.toolCalls)
			}
			if last := res.Messages[len(res.Messages)-1]; last.Role != ptk.RoleTool {
				t.Errorf("the last reply's calls have no answers: %+v", last)
			}
		})
	}
}

func TestCost(t *testing.T) {
	price := llm.Price{Input: 3, Output: 15}
	m := llm.Priced(llmtest.New(
		llmtest.Reply{Content: ptkCall("get_weather", `{"city": "A"}`), Usage: ptk.Usage{PromptTokens: 2000, CompletionTokens: 100}},
		llmtest.Reply{Content: "sunny", Usage: ptk.Usage{PromptTokens: 2500, CompletionTokens: 10}},
	), price)
	for _, stream := range []bool{false, true} {
		res := mustRun(t, "w", Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{weather(nil)}, StreamModel: stream})
		want := (4500*3 + 110*15) / 1e6
		if math.Abs(res.Cost-want) > 1e-12 {
			t.Errorf("stream %v: cost %v, want %v", stream, res.Cost, want)
		}
		m = llm.Priced(llmtest.New(
			llmtest.Reply{Content: ptkCall("get_weather", `{"city": "A"}`), Usage: ptk.Usage{PromptTokens: 2000, CompletionTokens: 100}},
			llmtest.Reply{Content: "sunny", Usage: ptk.Usage{PromptTokens: 2500, CompletionTokens: 10}},
		), price)
	}
}
