package llm_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
)

func TestFallback(t *testing.T) {
	down := &llm.Error{Kind: llm.ErrServer, Status: 503, Message: "overloaded"}
	bad := &llm.Error{Kind: llm.ErrBadRequest, Status: 400, Message: "bad"}
	for _, stream := range []bool{false, true} {
		a := llmtest.New(llmtest.Reply{Err: down}, llmtest.Reply{Err: bad})
		b := llmtest.New(llmtest.Text("from b"), llmtest.Text("unused"))
		f := llm.Fallback(a, b)
		call := func() (*llm.Response, error) {
			if stream {
				return llm.Collect(f.(llm.Streamer).Stream(context.Background(), llm.Request{}))
			}
			return f.Generate(context.Background(), llm.Request{})
		}
		resp, err := call()
		if err != nil || resp.Content != "from b" {
			t.Fatalf("stream %v: %v, %v; want b's answer after a's 503", stream, resp, err)
		}
		// A bad request is not tried elsewhere.
		if _, err := call(); !errors.Is(err, llm.ErrBadRequest) || len(b.Requests()) != 1 {
			t.Errorf("stream %v: bad request: %v, b asked %d times", stream, err, len(b.Requests()))
		}
	}
	// All fail: the last error.
	f := llm.Fallback(llmtest.New(llmtest.Reply{Err: down}), llmtest.New(llmtest.Reply{Err: &llm.Error{Kind: llm.ErrAuth}}))
	if _, err := f.Generate(context.Background(), llm.Request{}); !errors.Is(err, llm.ErrAuth) {
		t.Errorf("all failed: %v", err)
	}
}

type noTools struct{ llm.Model }

func (noTools) SupportsNativeTools() bool { return false }

func TestPricedAndCapabilities(t *testing.T) {
	p := llm.Price{Input: 1, Output: 2}
	m := llm.Priced(noTools{llmtest.New(llmtest.Reply{Content: "x", Usage: ptk.Usage{PromptTokens: 1_000_000, CompletionTokens: 1_000_000}})}, p)
	resp, err := llm.Collect(m.(llm.Streamer).Stream(context.Background(), llm.Request{}))
	if err != nil || resp.Cost != 3 || resp.Content != "x" {
		t.Fatalf("%+v %v", resp, err)
	}
	if ts, ok := llm.As[llm.ToolSupporter](m); !ok || ts.SupportsNativeTools() {
		t.Error("Priced hides the wrapped model's ToolSupporter")
	}
	if pr, ok := llm.PriceOf(m); !ok || pr != p {
		t.Error("Priced does not report its price")
	}
	if ts := llm.Fallback(llmtest.New(), m).(llm.ToolSupporter); ts.SupportsNativeTools() {
		t.Error("a fallback with a text-only model claims native tools")
	}
}

type marked struct{ llm.Model }

func (marked) Marked() {}

func TestFallbackCapabilities(t *testing.T) {
	a := llm.Priced(llmtest.New(), llm.Price{Input: 1, Output: 9, CacheWrite: 4})
	b := llm.Priced(marked{llmtest.New()}, llm.Price{Input: 3, Output: 2, CacheRead: 0.5})
	p, ok := llm.PriceOf(llm.Fallback(a, b))
	// Each part at its lowest; a cache price of zero is the input price.
	if want := (llm.Price{Input: 1, Output: 2, CacheRead: 0.5, CacheWrite: 3}); !ok || p != want {
		t.Errorf("PriceOf(Fallback) = %v, %v; want %v", p, ok, want)
	}
	// Any other capability is the first model's that has it, found
	// through the wrappers of each.
	if _, ok := llm.As[interface{ Marked() }](llm.Fallback(a, llm.Fallback(llmtest.New(), b))); !ok {
		t.Error("As does not look through a fallback's models")
	}
	if _, ok := llm.As[interface{ Marked() }](llm.Fallback(a, a)); ok {
		t.Error("As found a capability no model has")
	}
}
