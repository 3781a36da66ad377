package completion

import (
	"context"
	"iter"

	"github.com/ptkit/ptk/llm"
)

// funcModel is a model that is a function.
type funcModel struct {
	fn func(ctx context.Context, prompt string) (string, error)
}

// streamFunc is a model that is a function that writes its answer in
// pieces.
type streamFunc struct {
	fn func(ctx context.Context, prompt string, yield func(string) bool) error
}

var (
	_ llm.ToolSupporter = (*funcModel)(nil)
	_ llm.TextCompleter = (*funcModel)(nil)
	_ llm.Streamer      = (*streamFunc)(nil)
	_ llm.ToolSupporter = (*streamFunc)(nil)
	_ llm.TextCompleter = (*streamFunc)(nil)
)

// CompletesText marks the model as one that reads one flattened prompt.
func (*funcModel) CompletesText() {}

// CompletesText marks the model as one that reads one flattened prompt.
func (*streamFunc) CompletesText() {}

// Func returns a model that answers with fn: fn gets the conversation
// flattened into one prompt (the request's Prompt, or a transcript of its
// Messages) and returns the text the model wrote (the
// answer of a browser-driven chat, of a local binary). The text is cut at
// the first line that starts with a turn header and at the request's stop
// sequences, which fn need not know. The response has no usage, and
// FinishReason "stop".
//
// fn is called on the caller's goroutine and should return when ctx is
// done. An error it returns comes back as it is when it is an *llm.Error
// or a context error, and otherwise as an *llm.Error of kind
// [llm.ErrServer]. Func does not retry.
func Func(fn func(ctx context.Context, prompt string) (string, error)) llm.Model {
	return &funcModel{fn}
}

// SupportsNativeTools reports false: fn takes a prompt only.
func (*funcModel) SupportsNativeTools() bool { return false }

func (m *funcModel) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	text, err := m.fn(ctx, prompt(req))
	if err != nil {
		return nil, funcError(ctx, err)
	}
	cut := newCutter(req.Stop)
	return &llm.Response{Content: cut.write(text) + cut.flush(), FinishReason: "stop"}, nil
}

// FuncStream is [Func] for a function that writes its answer in pieces:
// it calls yield with each, on the goroutine it was called on, and returns
// when yield returns false (the text reached a stop sequence, the caller
// stopped reading, or ctx is done).
// The model is an [llm.Streamer]; its Generate collects the stream.
func FuncStream(fn func(ctx context.Context, prompt string, yield func(string) bool) error) llm.Streamer {
	return &streamFunc{fn}
}

// SupportsNativeTools reports false: fn takes a prompt only.
func (*streamFunc) SupportsNativeTools() bool { return false }

func (m *streamFunc) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	resp, err := llm.Collect(m.Stream(ctx, req))
	if err != nil {
		return nil, err
	}
	return resp, nil
}

func (m *streamFunc) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		if err := checkRequest(req); err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		cut := newCutter(req.Stop)
		open := true // the caller reads on
		err := m.fn(ctx, prompt(req), func(s string) bool {
			if !open || cut.stopped || ctx.Err() != nil {
				return false
			}
			if text := cut.write(s); text != "" {
				open = yield(llm.Chunk{Text: text}, nil)
			}
			return open && !cut.stopped
		})
		if !open {
			return
		}
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		if err != nil {
			yield(llm.Chunk{}, funcError(ctx, err))
			return
		}
		yield(llm.Chunk{Text: cut.flush(), FinishReason: "stop"}, nil)
	}
}
