package gateway_test

// Event-stream grammars of the agents' APIs: every stream the gateway
// writes for Anthropic Messages or Responses is read here event by event,
// checked against the API's grammar, and rebuilt into the whole answer it
// stands for, so that a test can compare it with the non-streamed answer.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	anthropic "github.com/ptkit/ptk/llm/anthropic/wire"
	"github.com/ptkit/ptk/llm/openai/responses"
)

// sseEvent is one event of a stream: its name and its data.
type sseEvent struct {
	name string
	data []byte
}

// sseParse cuts a stream into events. Each event must end with a blank
// line, have one data line and at most one event line; comment lines
// (": keep-alive") may stand between events. It reports how many comments
// it skipped.
func sseParse(body []byte) (events []sseEvent, comments int, err error) {
	if !bytes.HasSuffix(body, []byte("\n\n")) && len(body) > 0 {
		return nil, 0, fmt.Errorf("the stream does not end with a blank line: %q", tail(body))
	}
	for _, block := range strings.Split(strings.TrimSuffix(string(body), "\n\n"), "\n\n") {
		var ev sseEvent
		datas := 0
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, ":"):
				comments++
			case strings.HasPrefix(line, "event: "):
				if ev.name != "" {
					return nil, 0, fmt.Errorf("two event lines in %q", block)
				}
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				datas++
				ev.data = []byte(strings.TrimPrefix(line, "data: "))
			default:
				return nil, 0, fmt.Errorf("line %q is not an event line", line)
			}
		}
		if datas == 0 && ev.name == "" {
			continue // only comments
		}
		if datas != 1 {
			return nil, 0, fmt.Errorf("event %q has %d data lines", block, datas)
		}
		if !json.Valid(ev.data) {
			return nil, 0, fmt.Errorf("event %q: the data is not JSON", block)
		}
		var typ struct {
			Type string `json:"type"`
		}
		json.Unmarshal(ev.data, &typ)
		if ev.name != typ.Type {
			return nil, 0, fmt.Errorf("event %q carries data of type %q", ev.name, typ.Type)
		}
		events = append(events, ev)
	}
	return events, comments, nil
}

func tail(b []byte) []byte {
	if len(b) > 200 {
		return b[len(b)-200:]
	}
	return b
}

// messagesStream checks a Messages stream against its grammar
//
//	message_start ping* (block | ping)* message_delta ping* message_stop
//	block = content_block_start (content_block_delta | ping)* content_block_stop
//
// (an error event may end it anywhere after message_start): blocks indexed
// from 0 in order, each delta of its block's kind, a tool_use's input
// deltas making one JSON object, a stop_reason from the API's list. It
// returns the message the stream builds, as a whole answer has it, and the
// error event's data, if the stream ended with one.
func messagesStream(body []byte) (msg anthropic.Response, errData []byte, err error) {
	events, _, err := sseParse(body)
	if err != nil {
		return msg, nil, err
	}
	if len(events) == 0 || events[0].name != "message_start" {
		return msg, nil, fmt.Errorf("the stream does not begin with message_start: %s", body)
	}
	var start anthropic.Event
	json.Unmarshal(events[0].data, &start)
	msg = start.Message
	if msg.Type != "message" || msg.Role != "assistant" || msg.ID == "" || len(msg.Content) != 0 || msg.StopReason != nil {
		return msg, nil, fmt.Errorf("message_start's message %s is not an empty assistant message", events[0].data)
	}
	open := -1 // the open block's index
	var input []byte
	stopped, ended := false, false
	for i, ev := range events[1:] {
		if ended {
			return msg, nil, fmt.Errorf("event %d (%s) after message_stop", i+1, ev.name)
		}
		var e anthropic.Event
		if err := json.Unmarshal(ev.data, &e); err != nil {
			return msg, nil, fmt.Errorf("event %s: %v", ev.data, err)
		}
		switch ev.name {
		case "ping":
		case "error":
			if i+2 != len(events) {
				return msg, nil, fmt.Errorf("events after the error event %s", ev.data)
			}
			return msg, ev.data, nil
		case "content_block_start":
			if open >= 0 || stopped || e.Index != len(msg.Content) {
				return msg, nil, fmt.Errorf("content_block_start %s: open block %d, %d blocks so far, stopped %v", ev.data, open, len(msg.Content), stopped)
			}
			b := e.ContentBlock
			switch b.Type {
			case "text", "thinking":
				if b.Text != "" || b.Thinking != "" {
					return msg, nil, fmt.Errorf("content_block_start %s: a block begins empty", ev.data)
				}
			case "tool_use":
				if b.ID == "" || b.Name == "" || string(b.Input) != "{}" {
					return msg, nil, fmt.Errorf("content_block_start %s: a tool_use begins with its id, name and input {}", ev.data)
				}
				b.Input, input = nil, nil
			default:
				return msg, nil, fmt.Errorf("content_block_start %s: unknown block type", ev.data)
			}
			msg.Content = append(msg.Content, b)
			open = e.Index
		case "content_block_delta":
			if open < 0 || e.Index != open {
				return msg, nil, fmt.Errorf("content_block_delta %s for block %d, open %d", ev.data, e.Index, open)
			}
			b := &msg.Content[open]
			switch d := e.Delta; {
			case d.Type == "text_delta" && b.Type == "text":
				b.Text += d.Text
			case d.Type == "thinking_delta" && b.Type == "thinking":
				b.Thinking += d.Thinking
			case d.Type == "signature_delta" && b.Type == "thinking":
				b.Signature += d.Signature
			case d.Type == "input_json_delta" && b.Type == "tool_use":
				input = append(input, d.PartialJSON...)
			default:
				return msg, nil, fmt.Errorf("content_block_delta %s in a %s block", ev.data, b.Type)
			}
		case "content_block_stop":
			if open < 0 || e.Index != open {
				return msg, nil, fmt.Errorf("content_block_stop %s, open %d", ev.data, open)
			}
			if b := &msg.Content[open]; b.Type == "tool_use" {
				var obj map[string]any
				if json.Unmarshal(input, &obj) != nil || obj == nil {
					return msg, nil, fmt.Errorf("tool_use block %d: its input deltas %q are not a JSON object", open, input)
				}
				b.Input = input
			}
			open = -1
		case "message_delta":
			if open >= 0 || stopped {
				return msg, nil, fmt.Errorf("message_delta %s with block %d open, stopped %v", ev.data, open, stopped)
			}
			if !slices.Contains([]string{"end_turn", "max_tokens", "stop_sequence", "tool_use", "refusal", "pause_turn"}, e.Delta.StopReason) || e.Usage == nil {
				return msg, nil, fmt.Errorf("message_delta %s: no stop_reason of the API's, or no usage", ev.data)
			}
			stopped = true
			reason := e.Delta.StopReason
			msg.StopReason = &reason
			msg.Usage.Merge(*e.Usage)
		case "message_stop":
			if !stopped {
				return msg, nil, fmt.Errorf("message_stop before message_delta")
			}
			ended = true
		default:
			return msg, nil, fmt.Errorf("unknown event %s", ev.name)
		}
	}
	if !ended {
		return msg, nil, fmt.Errorf("the stream ends without message_stop: %s", tail(body))
	}
	return msg, nil, nil
}

// responsesStream checks a Responses stream against its grammar
//
//	response.created response.in_progress item* (response.completed | response.incomplete | response.failed)
//	item = output_item.added content_part.added (output_text.delta)* output_text.done content_part.done output_item.done   (a message)
//	     | output_item.added content_part.added (reasoning_text.delta)* reasoning_text.done content_part.done output_item.done
//	     | output_item.added (function_call_arguments.delta)* function_call_arguments.done output_item.done
//
// with sequence numbers from 0 by one, output indexes in order, each done
// event carrying what its deltas made, and the last event's response
// holding the items as the events built them. It returns that response.
func responsesStream(body []byte) (*responses.Response, error) {
	events, _, err := sseParse(body)
	if err != nil {
		return nil, err
	}
	var (
		evs    []responses.Event
		output []responses.Item
		text   strings.Builder
		state  string // what the open item expects next
	)
	for i, ev := range events {
		var e responses.Event
		if err := json.Unmarshal(ev.data, &e); err != nil {
			return nil, fmt.Errorf("event %s: %v", ev.data, err)
		}
		if e.SequenceNumber != i {
			return nil, fmt.Errorf("event %d (%s) has sequence_number %d", i, ev.name, e.SequenceNumber)
		}
		evs = append(evs, e)
	}
	if len(evs) < 3 || evs[0].Type != "response.created" || evs[1].Type != "response.in_progress" {
		return nil, fmt.Errorf("the stream does not begin with response.created, response.in_progress: %s", tail(body))
	}
	for _, e := range evs[:2] {
		if r := e.Response; r == nil || r.Status != "in_progress" || r.ID == "" || len(r.Output) != 0 || r.Object != "response" {
			return nil, fmt.Errorf("%s: the response is not an empty one in progress", e.Type)
		}
	}
	id := evs[0].Response.ID
	at := func(e responses.Event) error {
		if e.OutputIndex != len(output)-1 {
			return fmt.Errorf("%s for output %d, the open item is %d", e.Type, e.OutputIndex, len(output)-1)
		}
		if e.ItemID != "" && e.ItemID != output[len(output)-1].ID {
			return fmt.Errorf("%s for item %s, the open item is %s", e.Type, e.ItemID, output[len(output)-1].ID)
		}
		return nil
	}
	for i, e := range evs[2:] {
		last := i+3 == len(evs)
		if err := func() error {
			switch e.Type {
			case "response.completed", "response.incomplete", "response.failed":
				// A failure may cut an item short; the other ends come
				// after the last item's end.
				if !last || state != "" && e.Type != "response.failed" {
					return fmt.Errorf("%s with an item open (%s) or before the end", e.Type, state)
				}
				return nil
			case "response.output_item.added":
				if state != "" || e.Item == nil || e.OutputIndex != len(output) || e.Item.Status != "in_progress" {
					return fmt.Errorf("output_item.added at %d (%d items, open %q)", e.OutputIndex, len(output), state)
				}
				output = append(output, *e.Item)
				text.Reset()
				switch e.Item.Type {
				case "message":
					state = "part"
				case "reasoning":
					state = "reasoning-part"
				case "function_call":
					if e.Item.CallID == "" || e.Item.Name == "" || e.Item.Arguments != "" {
						return fmt.Errorf("function_call item %+v begins without its call_id or name, or with arguments", e.Item)
					}
					state = "args"
				default:
					return fmt.Errorf("output item of type %q", e.Item.Type)
				}
				return nil
			case "response.content_part.added":
				want := map[string]string{"part": "output_text", "reasoning-part": "reasoning_text"}[state]
				if want == "" || e.Part == nil || e.Part.Type != want || e.Part.Text != "" || e.ContentIndex != 0 {
					return fmt.Errorf("content_part.added %+v when %q", e.Part, state)
				}
				state = map[string]string{"part": "text", "reasoning-part": "reasoning"}[state]
				return at(e)
			case "response.output_text.delta", "response.reasoning_text.delta", "response.function_call_arguments.delta":
				want := map[string]string{"response.output_text.delta": "text", "response.reasoning_text.delta": "reasoning", "response.function_call_arguments.delta": "args"}[e.Type]
				if state != want {
					return fmt.Errorf("%s when %q", e.Type, state)
				}
				text.WriteString(e.Delta)
				return at(e)
			case "response.output_text.done", "response.reasoning_text.done", "response.function_call_arguments.done":
				want := map[string]string{"response.output_text.done": "text", "response.reasoning_text.done": "reasoning", "response.function_call_arguments.done": "args"}[e.Type]
				got := e.Text
				if want == "args" {
					got = e.Arguments
				}
				if state != want || got != text.String() {
					return fmt.Errorf("%s %q when %q, the deltas made %q", e.Type, got, state, text.String())
				}
				it := &output[len(output)-1]
				switch want {
				case "args":
					var obj map[string]any
					if json.Unmarshal([]byte(got), &obj) != nil {
						return fmt.Errorf("function_call arguments %q are not a JSON object", got)
					}
					it.Arguments = got
					state = "item-done"
				case "text":
					it.Content = &responses.Content{Parts: []responses.Part{responses.OutputText(got)}}
					state = "part-done"
				default:
					it.Content = &responses.Content{Parts: []responses.Part{{Type: "reasoning_text", Text: got}}}
					state = "part-done"
				}
				return at(e)
			case "response.content_part.done":
				it := output[len(output)-1]
				if state != "part-done" || e.Part == nil || e.Part.Text != it.Content.Parts[0].Text {
					return fmt.Errorf("content_part.done %+v when %q", e.Part, state)
				}
				state = "item-done"
				return at(e)
			case "response.output_item.done":
				if state != "item-done" || e.Item == nil || e.Item.ID != output[len(output)-1].ID {
					return fmt.Errorf("output_item.done %+v when %q", e.Item, state)
				}
				got, _ := json.Marshal(e.Item)
				it := output[len(output)-1]
				it.Status = e.Item.Status
				want, _ := json.Marshal(it)
				if string(got) != string(want) {
					return fmt.Errorf("output_item.done's item %s, the events made %s", got, want)
				}
				output[len(output)-1] = *e.Item
				state = ""
				return at(e)
			}
			return fmt.Errorf("unknown event %s", e.Type)
		}(); err != nil {
			return nil, err
		}
	}
	end := evs[len(evs)-1]
	r := end.Response
	if r == nil || r.ID != id || "response."+r.Status != end.Type {
		return nil, fmt.Errorf("the stream ends with %s, not a response's end", end.Type)
	}
	if r.Status != "failed" && r.Usage == nil {
		return nil, fmt.Errorf("%s has no usage", end.Type)
	}
	got, _ := json.Marshal(r.Output)
	want, _ := json.Marshal(output)
	if r.Status != "failed" && string(got) != string(want) {
		return nil, fmt.Errorf("%s's output %s, the events made %s", end.Type, got, want)
	}
	return r, nil
}
