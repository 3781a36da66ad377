package trace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ptkit/ptk"
)

var t0 = time.UnixMicro(1_780_000_000_000_000)

func ms(n float64) Millis { return Millis(n * float64(time.Millisecond)) }

// fixture is a store's worth of runs: an agent run with model and tool
// calls, a failed agent run, a ptool run (a distilled function that fell
// back to the model), a workflow with a ptool step as a child.
func fixture() []*Record {
	return []*Record{
		{
			Run: Run{ID: "run-agent-ok", Kind: KindAgent, Name: "", Model: "qwen3:8b", Provider: "ollama", Mode: "ptk", StartedAt: t0,
				Duration: ms(1500), Status: StatusOK, Usage: ptk.Usage{PromptTokens: 1200, CompletionTokens: 80}, Cost: 0.002,
				Iterations: 2, NumToolCalls: 2, Input: "What does go.mod say?", Output: "It names the module github.com/ptkit/ptk."},
			ModelCalls: []ModelCall{
				{Mode: "ptk", Usage: ptk.Usage{PromptTokens: 500, CompletionTokens: 40}, Latency: ms(700), RequestHash: "aa", Text: "Let me read it.",
					Calls: []ptk.Call{{ID: "c1", Tool: "read_file", Args: json.RawMessage(`{"path":"go.mod"}`), Repairs: []string{"added the closing brace"}}}},
				{Mode: "ptk", Usage: ptk.Usage{PromptTokens: 700, CompletionTokens: 40}, Latency: ms(650), RequestHash: "bb", Text: "It names the module github.com/ptkit/ptk."},
			},
			ToolCalls: []ToolCall{
				{Iteration: 1, CallID: "c1", Tool: "read_file", Args: json.RawMessage(`{"path":"go.mod"}`), Result: "module github.com/ptkit/ptk\n",
					Outcome: OutcomeRan, Repairs: []string{"added the closing brace"}, Duration: ms(2)},
				{Iteration: 1, CallID: "c2", Tool: "bash", Args: json.RawMessage(`{"command":"rm -rf /"}`), Result: "denied: needs approval",
					IsError: true, ErrorCode: "TOOL_CALL_DENIED", Outcome: OutcomeDenied},
			},
		},
		{
			Run: Run{ID: "run-agent-fail", Kind: KindAgent, Model: "gpt-4o", Mode: "native", StartedAt: t0.Add(time.Minute),
				Duration: ms(300), Status: StatusError, ErrorCode: "MAX_ITERATIONS_REACHED", ErrorMessage: "the run made 1 model call, its limit",
				Iterations: 1, NumToolCalls: 1, Input: "Loop forever"},
			ModelCalls: []ModelCall{{Mode: "native", Latency: ms(250), Calls: []ptk.Call{{ID: "x", Tool: "grep", Args: json.RawMessage(`{"pattern":"TODO"}`)}}}},
			ToolCalls: []ToolCall{{Iteration: 1, CallID: "x", Tool: "grep", Args: json.RawMessage(`{"pattern":"TODO"}`), Result: "none",
				Outcome: OutcomeRan, Duration: ms(8)}},
		},
		{
			Run: Run{ID: "run-workflow", Kind: KindWorkflow, Name: "triage", Model: "qwen3:8b", StartedAt: t0.Add(2 * time.Minute),
				Duration: ms(900), Status: StatusOK, Input: `{"ticket":"printer on fire"}`},
			Detail:     json.RawMessage(`{"steps":[{"ptool":"classify","ref":"$1"}]}`),
			ModelCalls: []ModelCall{}, ToolCalls: []ToolCall{},
		},
		{
			Run: Run{ID: "run-ptool", ParentID: "run-workflow", Kind: KindPtool, Name: "classify", Model: "qwen3:8b", StartedAt: t0.Add(2*time.Minute + time.Second),
				Duration: ms(400), Status: StatusOK, Usage: ptk.Usage{PromptTokens: 300, CompletionTokens: 5}, Cost: 0.0001,
				Input: `{"text":"printer on fire"}`, Output: `"urgent"`},
			ModelCalls: []ModelCall{{Mode: "ptk", Usage: ptk.Usage{PromptTokens: 300, CompletionTokens: 5}, Latency: ms(390), Text: `"urgent"`}},
			ToolCalls:  []ToolCall{},
			PtoolCalls: []PtoolCall{{Ptool: "classify", Input: json.RawMessage(`{"text":"printer on fire"}`), Output: json.RawMessage(`"urgent"`),
				Attempts: []Attempt{{Output: "URGENT!", Problems: []string{"not one of the enum's values"}}, {Output: `"urgent"`}},
				Repairs:  []string{"lower-cased"}, Source: "model", Fallback: true, Duration: ms(400)}},
		},
	}
}

func TestWriteGetList(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		recs := fixture()
		if err := s.Write(ctx, recs...); err != nil {
			t.Fatal(err)
		}
		// A record written again is left as it is.
		again := fixture()[0]
		again.Output = "changed"
		if err := s.Write(ctx, again); err != nil {
			t.Fatal(err)
		}
		for _, want := range fixture() {
			got, err := s.Get(ctx, want.ID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Get(%s) (-want +got):\n%s", want.ID, diff)
			}
		}
		if _, err := s.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(nope) = %v, want ErrNotFound", err)
		}
		if got, err := s.Get(ctx, "run-agent-f"); err != nil || got.ID != "run-agent-fail" {
			t.Errorf("Get by a unique prefix = %v, %v", got, err)
		}
		if _, err := s.Get(ctx, "run-agent"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get by an ambiguous prefix = %v, want ErrNotFound", err)
		}

		ids := func(f Filter) string {
			t.Helper()
			runs, err := s.List(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, r := range runs {
				out = append(out, r.ID)
			}
			n, err := s.Count(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if f.Limit == 0 && f.Offset == 0 && n != len(runs) {
				t.Errorf("Count(%+v) = %d, List gave %d", f, n, len(runs))
			}
			return strings.Join(out, " ")
		}
		for _, c := range []struct {
			f    Filter
			want string
		}{
			{Filter{}, "run-ptool run-workflow run-agent-fail run-agent-ok"},
			{Filter{Kind: KindAgent}, "run-agent-fail run-agent-ok"},
			{Filter{Kind: KindPtool, Name: "classify"}, "run-ptool"},
			{Filter{Tool: "read_file"}, "run-agent-ok"},
			{Filter{Model: "gpt-4o"}, "run-agent-fail"},
			{Filter{Status: StatusError}, "run-agent-fail"},
			{Filter{Since: t0.Add(time.Minute)}, "run-ptool run-workflow run-agent-fail"},
			{Filter{Until: t0.Add(time.Minute)}, "run-agent-ok"},
			{Filter{Text: "GO.MOD"}, "run-agent-ok"},
			{Filter{Text: "iterations_"}, ""}, // _ is not a wildcard
			{Filter{Text: "limit"}, "run-agent-fail"},
			{Filter{Limit: 2, Offset: 1}, "run-workflow run-agent-fail"},
		} {
			if got := ids(c.f); got != c.want {
				t.Errorf("List(%+v) = %q, want %q", c.f, got, c.want)
			}
		}
		runs, _ := s.List(ctx, Filter{Kind: KindAgent, Status: StatusOK})
		if len(runs) != 1 || runs[0].NumToolCalls != 2 || runs[0].Usage.PromptTokens != 1200 || !runs[0].StartedAt.Equal(t0) {
			t.Errorf("List summary = %+v", runs)
		}
	})
}

func TestStatsExamples(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		if err := s.Write(ctx, fixture()...); err != nil {
			t.Fatal(err)
		}
		// 20 runs of a tool lasting 1..20 ms, every fourth one an error.
		for i := 1; i <= 20; i++ {
			s.Write(ctx, &Record{Run: Run{ID: fmt.Sprintf("g%02d", i), Kind: KindAgent, Model: "m", StartedAt: t0.Add(time.Hour),
				Status: StatusOK, Duration: ms(float64(i))},
				ToolCalls: []ToolCall{{Tool: "glob", Outcome: OutcomeRan, IsError: i%4 == 0, Duration: ms(float64(i))}}})
		}
		st, err := s.Stats(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		glob := st.Tools[0]
		if glob.Name != "glob" || glob.Calls != 20 || glob.Errors != 5 || glob.SuccessRate != 0.75 || glob.P50 != ms(10) || glob.P95 != ms(19) {
			t.Errorf("glob stats = %+v", glob)
		}
		var classify Stat
		for _, p := range st.Ptools {
			if p.Name == "classify" {
				classify = p
			}
		}
		if classify.Calls != 1 || classify.Fallbacks != 1 || classify.FallbackRate != 1 || classify.P50 != ms(400) {
			t.Errorf("classify stats = %+v", classify)
		}
		var qwen Stat
		for _, m := range st.Models {
			if m.Name == "qwen3:8b" {
				qwen = m
			}
		}
		if qwen.Calls != 3 || qwen.Usage.PromptTokens != 1500 || qwen.P50 != ms(650) {
			t.Errorf("qwen3:8b stats = %+v", qwen)
		}
		// Stats of a time range see only its runs.
		st, err = s.Stats(ctx, Filter{Until: t0.Add(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Runs) != 1 || st.Runs[0].Calls != 1 || len(st.Tools) != 2 {
			t.Errorf("stats of the first minute = %+v", st)
		}
		ex, err := s.Examples(ctx, "classify", 5)
		if err != nil || len(ex) != 1 || string(ex[0].Output) != `"urgent"` {
			t.Errorf("Examples = %+v, %v", ex, err)
		}
	})
}

func TestPruneExport(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		if err := s.Write(ctx, fixture()...); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		n, err := s.Export(ctx, &buf, Filter{})
		if err != nil || n != 4 {
			t.Fatalf("Export = %d, %v", n, err)
		}
		sc := bufio.NewScanner(&buf)
		sc.Buffer(nil, 1<<20)
		for i := 0; sc.Scan(); i++ {
			var got Record
			if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			want := fixture()[i]
			if want.Detail == nil {
				want.Detail = nil
			}
			if diff := cmp.Diff(want, &got); diff != "" {
				t.Errorf("exported line %d (-want +got):\n%s", i, diff)
			}
		}
		n, err = s.Prune(ctx, t0.Add(30*time.Second), 0)
		if err != nil || n != 1 {
			t.Fatalf("Prune by age = %d, %v", n, err)
		}
		n, err = s.Prune(ctx, time.Time{}, 1)
		if err != nil || n != 2 {
			t.Fatalf("Prune to 1 run = %d, %v", n, err)
		}
		runs, _ := s.List(ctx, Filter{})
		if len(runs) != 1 || runs[0].ID != "run-ptool" {
			t.Errorf("after pruning: %+v", runs)
		}
		for _, table := range []string{"model_calls", "tool_calls", "ptool_calls"} {
			var left int
			s.db.QueryRow("SELECT COUNT(*) FROM " + table + " WHERE run_id <> 'run-ptool'").Scan(&left)
			if left != 0 {
				t.Errorf("%d rows of pruned runs left in %s", left, table)
			}
		}
	})
}

func TestConversations(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		if msgs, err := s.Load(ctx, "new"); err != nil || msgs != nil {
			t.Errorf("Load of an unknown conversation = %v, %v", msgs, err)
		}
		msgs := []ptk.Message{
			{Role: ptk.RoleUser, Content: "hi"},
			{Role: ptk.RoleAssistant, Content: "Reading.", Calls: []ptk.Call{{ID: "1", Tool: "read_file", Args: json.RawMessage(`{"path":"a"}`)}}},
			{Role: ptk.RoleTool, CallID: "1", Tool: "read_file", Content: "<PTK_RESULT>", IsError: true},
		}
		if err := s.Save(ctx, "a", msgs[:1]); err != nil {
			t.Fatal(err)
		}
		if err := s.Save(ctx, "a", msgs); err != nil {
			t.Fatal(err)
		}
		s.Save(ctx, "b", msgs[:1])
		got, err := s.Load(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(msgs, got); diff != "" {
			t.Errorf("Load (-want +got):\n%s", diff)
		}
		list, err := s.Conversations(ctx)
		if err != nil || len(list) != 2 || list[0].ID != "b" || list[1].Messages != 3 {
			t.Errorf("Conversations = %+v, %v", list, err)
		}
		if err := s.DeleteConversation(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteConversation(ctx, "a"); !errors.Is(err, ErrNotFound) {
			t.Errorf("deleting twice = %v", err)
		}
	})
}

func TestSeriesMark(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		if m, err := s.Mark(ctx); err != nil || m.Runs != 0 {
			t.Fatalf("Mark of an empty store = %+v, %v", m, err)
		}
		s.Write(ctx, fixture()...)
		m, err := s.Mark(ctx)
		if err != nil || m.Runs != 4 || m.Newest != t0.Add(2*time.Minute+time.Second).UnixMicro() {
			t.Errorf("Mark = %+v, %v", m, err)
		}
		b, err := s.Series(ctx, Filter{}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != 3 || b[0].Runs != 1 || b[1].Errors != 1 || b[2].Runs != 2 || b[2].Duration != ms(650) || !b[1].Start.Equal(t0.Add(time.Minute).Truncate(time.Minute)) {
			t.Errorf("Series = %+v", b)
		}
	})
}
