package httpx

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm"
)

// The attack: a model server (hostile, or a broken one looping) answers
// with a body that never ends. ptk read it whole (io.ReadAll) or kept
// every streamed chunk, until memory ran out: ptk serve with it. What a
// model answers is read up to MaxAnswerBytes, then the call fails saying
// why.
func TestEndlessAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"content":"`)
		chunk := strings.Repeat("all work and no play ", 1<<12)
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	tr := New("test", srv.URL)
	fail := func(status int, h http.Header, body []byte) *llm.Error { return &llm.Error{Message: string(body)} }
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := tr.Post(ctx, srv.URL, []byte(`{}`), JSON(false), fail)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if ctx.Err() != nil {
		t.Fatalf("still reading after %d MiB", n>>20)
	}
	if !errors.Is(err, ErrAnswerTooLong) || n > MaxAnswerBytes {
		t.Errorf("read %d bytes, then %v; want at most %d, then ErrAnswerTooLong", n, err, MaxAnswerBytes)
	}
}
