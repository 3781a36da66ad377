package turn_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/turn"
)

// long is a conversation of two exchanges with calls, then a compaction
// whose summary stands for the first four messages, then one more turn.
func long() []ptk.Message {
	call := func(id, path string) ptk.Message {
		return ptk.Message{Role: ptk.RoleAssistant, Content: "Reading.", Calls: []ptk.Call{{ID: id, Tool: "read_file", Args: json.RawMessage(`{"path":"` + path + `"}`)}}}
	}
	return []ptk.Message{
		{Role: ptk.RoleUser, Content: "Read a.go and b.go."},
		call("c1", "a.go"),
		{Role: ptk.RoleTool, CallID: "c1", Tool: "read_file", Content: "package a"},
		{Role: ptk.RoleAssistant, Content: "a.go declares package a."},
		call("c2", "b.go"),
		{Role: ptk.RoleTool, CallID: "c2", Tool: "read_file", Content: "package b"},
		{Role: ptk.RoleUser, Content: "SUMMARY: the user asked to read a.go and b.go; a.go is package a.", Compacted: 4},
		{Role: ptk.RoleAssistant, Content: "b.go declares package b."},
	}
}

func TestHistoryFromCompaction(t *testing.T) {
	msgs := long()
	for _, mode := range []turn.Mode{turn.PTK, turn.Native} {
		// appended at once, one by one, and rendered again for the other mode
		for _, way := range []string{"at once", "one by one", "mode switched"} {
			var h *turn.History
			switch way {
			case "at once":
				h = turn.NewHistory(mode, nil, "Be brief.", tools)
				h.Append(msgs...)
			case "one by one":
				h = turn.NewHistory(mode, nil, "Be brief.", tools)
				for _, m := range msgs {
					h.Append(m)
				}
			case "mode switched":
				other := turn.Native
				if mode == turn.Native {
					other = turn.PTK
				}
				h = turn.NewHistory(other, nil, "Be brief.", tools)
				h.Append(msgs...)
				h.SetMode(mode)
			}
			ref := turn.NewHistory(mode, nil, "Be brief.", tools)
			ref.Append(ptk.Message{Role: ptk.RoleUser, Content: msgs[6].Content})
			ref.Append(msgs[4], msgs[5], msgs[7])
			if d := cmp.Diff(ref.Rendered(), h.Rendered()); d != "" {
				t.Errorf("%s, %s: rendered (-want +got):\n%s", mode, way, d)
			}
			if d := cmp.Diff(msgs, h.Messages()); d != "" {
				t.Errorf("%s, %s: Messages must keep every message (-want +got):\n%s", mode, way, d)
			}
			if h.Shown() != 4 {
				t.Errorf("%s, %s: Shown() = %d, want 4", mode, way, h.Shown())
			}
			if got, want := h.Tokens(), ref.Tokens(); got != want {
				t.Errorf("%s, %s: Tokens() = %d, want %d", mode, way, got, want)
			}
		}
	}
}

// A summary that says it stands for a tool result's call, but not the
// result, or for more messages than came before it, never leaves a result
// without its call.
func TestCompactionNeverSplitsACall(t *testing.T) {
	msgs := long()
	for _, n := range []int{5, 6, 100} {
		msgs[6].Compacted = n
		last, from := turn.Compaction(msgs)
		if last != 6 || from != 6 {
			t.Errorf("Compacted %d: Compaction = %d, %d; want 6, 6", n, last, from)
		}
		h := turn.NewHistory(turn.Native, nil, "", tools)
		h.Append(msgs...)
		for _, m := range h.Rendered() {
			if m.Role == ptk.RoleTool {
				t.Errorf("Compacted %d: a result without its call was rendered: %+v", n, m)
			}
		}
	}
	if last, from := turn.Compaction(msgs[:6]); last != -1 || from != 0 {
		t.Errorf("no compaction: %d, %d", last, from)
	}
}

// The latest of several compactions counts; an assistant message cannot be
// one.
func TestLatestCompaction(t *testing.T) {
	msgs := long()
	msgs = append(msgs, ptk.Message{Role: ptk.RoleAssistant, Content: "not a summary", Compacted: 1},
		ptk.Message{Role: ptk.RoleUser, Content: "SUMMARY 2", Compacted: 7}, ptk.Message{Role: ptk.RoleUser, Content: "Next?"})
	h := turn.NewHistory(turn.PTK, nil, "", tools)
	h.Append(msgs...)
	f := protocol.PTK{}
	want := []ptk.Message{
		{Role: ptk.RoleSystem, Content: f.SystemPrompt("", tools)},
		{Role: ptk.RoleUser, Content: "SUMMARY 2"},
		{Role: ptk.RoleAssistant, Content: "b.go declares package b."},
		{Role: ptk.RoleAssistant, Content: "not a summary"},
		{Role: ptk.RoleUser, Content: "Next?"},
	}
	if d := cmp.Diff(want, h.Rendered()); d != "" {
		t.Errorf("rendered (-want +got):\n%s", d)
	}
}

// Tokens counts each message once and follows a results message as it is
// redone.
func TestHistoryTokens(t *testing.T) {
	h := turn.NewHistory(turn.PTK, nil, "Be brief.", tools)
	sum := func() int {
		n := 0
		for _, m := range h.Rendered() {
			n += llm.EstimateMessage(m)
		}
		return n
	}
	for _, m := range conversation() {
		h.Append(m)
		if got, want := h.Tokens(), sum(); got != want {
			t.Fatalf("after %+v: Tokens() = %d, want %d", m, got, want)
		}
	}
	h.SetMode(turn.Native)
	if got, want := h.Tokens(), sum(); got != want {
		t.Fatalf("after SetMode: Tokens() = %d, want %d", got, want)
	}
}
