package turn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/turn"
)

// record runs one turn and returns its reply and a line per event.
func record(t *testing.T, tt turn.Turn, reply llmtest.Reply) (*turn.Reply, []string) {
	t.Helper()
	m := llmtest.New(reply)
	tt.Model = m
	var log []string
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			log = append(log, "text "+text.String())
			text.Reset()
		}
	}
	rep, err := tt.Ask(context.Background(), llm.Request{}, func(e turn.Event) {
		if e.Kind == turn.EventText {
			text.WriteString(e.Text)
			return
		}
		flush()
		switch e.Kind {
		case turn.EventReasoning:
			log = append(log, "reasoning "+e.Text)
		case turn.EventCallStart:
			log = append(log, fmt.Sprintf("start %d %s native=%v", e.Index, e.Call.Tool, e.Native))
		case turn.EventCallEnd:
			s := fmt.Sprintf("end %d %s %s native=%v", e.Index, e.Call.ID, e.Call.Tool, e.Native)
			if e.Err != nil {
				s += " " + string(e.Err.Code)
			}
			log = append(log, s)
		}
	})
	flush()
	if err != nil {
		t.Fatal(err)
	}
	return rep, log
}

func TestTurn(t *testing.T) {
	p, err := protocol.NewParser(tools)
	if err != nil {
		t.Fatal(err)
	}
	id := func(i int) string { return fmt.Sprint("c", i+1) }
	call := "Reading.\n<PTK_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"a\"}}\n</PTK_CALL>"
	native := []ptk.Call{{ID: "n1", Tool: "read_file", Args: json.RawMessage(`{"path": "a"}`)}, {ID: "n1", Tool: "read_file", Args: json.RawMessage(`{}`)}}
	cases := []struct {
		name  string
		turn  turn.Turn
		reply llmtest.Reply
		want  string
		calls int
		raw   bool // the assistant turn keeps the text as written
	}{
		{"ptk", turn.Turn{Parser: p, Mode: turn.PTK, CallID: id}, llmtest.Text(call),
			"[text Reading. start 0  native=false end 0 c1 read_file native=false]", 1, true},
		{"ptk streamed", turn.Turn{Parser: p, Mode: turn.PTK, CallID: id, Stream: true}, llmtest.Text(call),
			"[text Reading. start 0  native=false end 0 c1 read_file native=false]", 1, true},
		{"native mode, calls written as text: reported at the end", turn.Turn{Parser: p, Mode: turn.Native, CallID: id, Stream: true}, llmtest.Text(call),
			"[text Reading. end 0 c1 read_file native=false]", 1, false},
		{"native calls checked, a repeated id renamed", turn.Turn{Parser: p, Mode: turn.Native, CallID: id}, llmtest.Reply{Calls: native},
			"[end 0 n1 read_file native=true end 1 c2 read_file native=true INVALID_TOOL_CALL]", 2, false},
		{"native calls streamed", turn.Turn{Parser: p, Mode: turn.Native, CallID: id, Stream: true}, llmtest.Reply{Calls: native[:1], Reasoning: "hm"},
			"[reasoning hm start 0 read_file native=true end 0 n1 read_file native=true]", 1, false},
		{"no calls taken", turn.Turn{Parser: p, Mode: turn.PTK, CallID: id, NoCalls: true}, llmtest.Text(call),
			"[text Reading.]", 0, false},
		{"no parser: text as it is", turn.Turn{Mode: turn.Native}, llmtest.Text("<think>x</think>hi"),
			"[text <think>x</think>hi]", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, log := record(t, c.turn, c.reply)
			if got := fmt.Sprint(log); got != c.want {
				t.Errorf("events %s\nwant   %s", got, c.want)
			}
			if len(rep.Attempts) != c.calls {
				t.Errorf("%d calls, want %d", len(rep.Attempts), c.calls)
			}
			if m := rep.Message(); (m.Raw != "") != c.raw || len(m.Calls) != c.calls {
				t.Errorf("message %+v", m)
			}
		})
	}
}

func TestTurnModelError(t *testing.T) {
	fail := &llm.Error{Kind: llm.ErrToolsUnsupported, Status: 400, Message: "does not support tools"}
	for _, stream := range []bool{false, true} {
		_, err := turn.Turn{Model: llmtest.New(llmtest.Reply{Err: fail}), Stream: stream}.Ask(context.Background(), llm.Request{}, nil)
		if !errors.Is(err, llm.ErrToolsUnsupported) {
			t.Errorf("stream %v: err %v, want the model's error as it is", stream, err)
		}
	}
}
