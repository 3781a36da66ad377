package openai

import (
	"context"
	"io"
	"iter"
	"net/http"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// pipeTransport answers every request with the event stream the test
// writes to the pipe, as it writes it.
type pipeTransport struct{ r *io.PipeReader }

func (p pipeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: p.r, Request: req}, nil
}

// TestStreamMore: a chunk says More when the next one came in the same
// read, and only then, so that a consumer that sends its batch at the
// first chunk without More never waits for the network with a batch
// unsent. The test writes the stream piece by piece and reads each
// chunk before it writes the next piece.
func TestStreamMore(t *testing.T) {
	pr, pw := io.Pipe()
	c := New("http://upstream.test/v1", WithHTTPClient(&http.Client{Transport: pipeTransport{pr}}), WithMaxRetries(0))
	ev := func(s string) string { return "data: " + s + "\n\n" }
	text := func(s string) string { return ev(`{"choices":[{"index":0,"delta":{"content":"` + s + `"}}]}`) }
	steps := []struct {
		writes []string    // each one read
		want   []llm.Chunk // the chunks the writes bring
	}{
		{[]string{text("a")}, []llm.Chunk{{Text: "a"}}},
		// Two events in one read: the first says the second is here.
		{[]string{text("b") + text("c")}, []llm.Chunk{{Text: "b", More: true}, {Text: "c"}}},
		// An event cut in two reads: it waits for its second half, and the
		// chunk before did not wait for it.
		{[]string{`data: {"choices":[{"index":0,"delta":`, `{"content":"d"}}]}` + "\n\n"}, []llm.Chunk{{Text: "d"}}},
		// A keep-alive after an event is no event.
		{[]string{text("e") + ": keep-alive\n\n"}, []llm.Chunk{{Text: "e"}}},
		// An event that makes no chunk after one that said More: an empty
		// chunk ends the batch.
		{[]string{text("f") + ev(`{"choices":[]}`)}, []llm.Chunk{{Text: "f", More: true}, {}}},
		// The end of the answer came with the finish: nothing to wait for.
		{[]string{ev(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`) + ev(`[DONE]`)}, []llm.Chunk{{FinishReason: "stop", More: true}}},
	}
	next, stop := iter.Pull2(c.Stream(context.Background(), llm.Request{Model: "m", Messages: []ptk.Message{{Role: ptk.RoleUser, Content: "hi"}}}))
	defer stop()
	for i, s := range steps {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for _, w := range s.writes {
				if _, err := io.WriteString(pw, w); err != nil {
					t.Error(err)
				}
			}
		}()
		for j, want := range s.want {
			ch, err, ok := next()
			if !ok || err != nil {
				t.Fatalf("step %d: chunk %d: %v, %v", i, j, ok, err)
			}
			ch.Model = ""
			if ch.Text != want.Text || ch.More != want.More || ch.FinishReason != want.FinishReason {
				t.Errorf("step %d: chunk %d = %+v, want %+v", i, j, ch, want)
			}
		}
		<-done
	}
	pw.Close()
	if ch, err, ok := next(); ok {
		t.Errorf("a chunk after [DONE]: %+v, %v", ch, err)
	}
}
