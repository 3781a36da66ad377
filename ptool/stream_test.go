package ptool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/llm/openai"
	"github.com/ptkit/ptk/ptool"
)

type purchase struct {
	Customer string  `json:"customer"`
	Items    []line  `json:"items"`
	Total    float64 `json:"total"`
	Rush     bool    `json:"rush"`
	Note     string  `json:"note,omitempty"`
}

type line struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

// atBoundaries calls at between the chunks of every streamed answer, and
// after the last: when what came before it has been read.
type atBoundaries struct {
	*llmtest.Script
	at func()
}

func (b atBoundaries) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		for ch, err := range b.Script.Stream(ctx, req) {
			b.at()
			if !yield(ch, err) {
				return
			}
		}
		b.at()
	}
}

// holds reports whether whole holds every value part holds: the members
// of an object, the first items of a list, a scalar equal.
func holds(part, whole any) bool {
	switch x := part.(type) {
	case map[string]any:
		y, ok := whole.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !holds(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := whole.([]any)
		if !ok || len(y) < len(x) {
			return false
		}
		for i := range x {
			if !holds(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(part, whole)
}

// TestCallStreamPartials: at every chunk boundary, in pieces of 1, 2, 5 and
// 13 bytes, the output read so far is held by the final output: fields
// fill in as they are complete (a string never half), lists grow.
func TestCallStreamPartials(t *testing.T) {
	reply := "Let me read it.\n<answer>\n```json\n" + `{"customer": "Ada \"the\" Lovelace", "items": [{"sku": "ABC-1", "qty": 2}, {"sku": "XYZ-9", "qty": "3"}],
	  "total": 41.5, "rush": true, "note": "ring twice, then <wait>"}` + "\n```\n</answer>"
	for _, size := range []int{1, 2, 5, 13} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			m := llmtest.New(llmtest.Text(reply))
			m.ChunkSize = size
			var latest json.RawMessage
			var snapshots []json.RawMessage
			model := atBoundaries{m, func() { snapshots = append(snapshots, latest) }}
			p := ptool.New[review, purchase]("read_order", "Read the purchase.", ptool.WithModel(model))
			var final *ptool.Partial[purchase]
			distinct := 0
			for part, err := range p.CallStream(context.Background(), review{Text: "..."}) {
				if err != nil {
					t.Fatal(err)
				}
				if part.Done {
					final = &part
					break
				}
				if part.Attempt != 1 {
					t.Errorf("attempt %d", part.Attempt)
				}
				latest = part.JSON
				distinct++
			}
			if final == nil || final.Value.Customer != `Ada "the" Lovelace` || len(final.Value.Items) != 2 || final.Value.Items[1].Qty != 3 || final.Record == nil {
				t.Fatalf("final = %+v", final)
			}
			var whole any
			json.Unmarshal(final.JSON, &whole)
			for i, s := range snapshots {
				if s == nil {
					continue
				}
				var part any
				if err := json.Unmarshal(s, &part); err != nil || !holds(part, whole) {
					t.Errorf("at boundary %d: %s is not held by the final %s", i, s, final.JSON)
				}
			}
			// customer; items [], [1], [1 and {}]...; total; rush; note: one
			// state at least for each of them
			if distinct < 8 {
				t.Errorf("%d partial outputs, want one per field or item at least", distinct)
			}
		})
	}
}

// TestCallStreamRetry: an attempt whose answer does not fit ends, and the
// next starts over with its attempt number.
func TestCallStreamRetry(t *testing.T) {
	m := llmtest.New(
		llmtest.Text(`<answer>{"customer": "Ada", "items": [{"sku": "A", "qty": "many"}], "total": 1, "rush": false}</answer>`),
		llmtest.Text(`<answer>{"customer": "Bob", "items": [], "total": 2, "rush": false}</answer>`))
	p := ptool.New[review, purchase]("read_order", "Read the purchase.", ptool.WithModel(m))
	var attempts []int
	var final purchase
	for part, err := range p.CallStream(context.Background(), review{Text: "..."}) {
		if err != nil {
			t.Fatal(err)
		}
		attempts = append(attempts, part.Attempt)
		if part.Done {
			final = part.Value
		} else if part.Attempt == 2 && part.Value.Customer == "Ada" {
			t.Errorf("the second attempt carries the first's value: %s", part.JSON)
		}
	}
	if final.Customer != "Bob" || attempts[0] != 1 || attempts[len(attempts)-1] != 2 {
		t.Errorf("final %+v, attempts %v", final, attempts)
	}
}

// TestCallStreamStops: breaking out of the loop cancels the model's call;
// an error ends the stream; a scalar output comes only done.
func TestCallStreamStops(t *testing.T) {
	m := llmtest.New(llmtest.Text(`<answer>{"customer": "Ada", "items": [], "total": 1, "rush": false}</answer>`))
	m.ChunkSize = 1
	p := ptool.New[review, purchase]("read_order", "Read the purchase.", ptool.WithModel(m))
	n := 0
	for range p.CallStream(context.Background(), review{Text: "..."}) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("%d partials after a break", n)
	}
	boom := &llm.Error{Kind: llm.ErrServer, Message: "down"}
	q := ptool.New[review, purchase]("read_order", "Read the purchase.", ptool.WithModel(llmtest.New(llmtest.Reply{Err: boom})))
	var last error
	for _, err := range q.CallStream(context.Background(), review{Text: "..."}) {
		last = err
	}
	if !errors.Is(last, llm.ErrServer) {
		t.Errorf("err = %v", last)
	}
	s := ptool.New[review, string]("label", "Label.", ptool.WithModel(llmtest.New(llmtest.Text("<answer>spam</answer>"))))
	var parts []ptool.Partial[string]
	for part, err := range s.CallStream(context.Background(), review{Text: "buy"}) {
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, part)
	}
	if len(parts) != 1 || !parts[0].Done || parts[0].Value != "spam" {
		t.Errorf("a scalar output: %+v", parts)
	}
}

// TestCallStreamStructured: over an OpenAI-compatible server's stream, the
// output inside {"answer": …} fills in as it comes.
func TestCallStreamStructured(t *testing.T) {
	content := `{"answer": {"customer": "Ada", "items": [{"sku": "ABC-1", "qty": 2}], "total": 9.5, "rush": false}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"stream":true`) || !strings.Contains(string(body), `"response_format"`) {
			t.Errorf("request: %s", body)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < len(content); i += 4 {
			piece, _ := json.Marshal(content[i:min(i+4, len(content))])
			fmt.Fprintf(w, "data: {\"id\":\"1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s}}]}\n\n", piece)
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: {\"id\":\"1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	p := ptool.New[review, purchase]("read_order", "Read the purchase.", ptool.WithModel(openai.New(srv.URL, openai.WithMaxRetries(0))))
	var seen []string
	var final purchase
	for part, err := range p.CallStream(context.Background(), review{Text: "..."}) {
		if err != nil {
			t.Fatal(err)
		}
		if part.Done {
			final = part.Value
			continue
		}
		seen = append(seen, string(part.JSON))
	}
	if final.Customer != "Ada" || len(seen) < 4 || seen[0] != `{"customer":"Ada"}` || strings.Contains(strings.Join(seen, ""), "answer") {
		t.Errorf("final %+v, partials:\n%s", final, strings.Join(seen, "\n"))
	}
}
