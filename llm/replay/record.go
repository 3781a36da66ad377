package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"sync"
	"time"

	"github.com/ptkit/ptk/internal/outfile"
	"github.com/ptkit/ptk/llm"
)

// Record returns a model that answers with m and appends every call to w as
// one line of JSON, written with one Write once the call has ended. It is
// safe for concurrent use when m is: lines are written one at a time.
//
// The model streams with m when m is an [llm.Streamer], and otherwise as one
// chunk made from m's whole answer (recorded as a whole answer). It unwraps
// to m, so m's capabilities are found through it ([llm.As], [llm.PriceOf],
// [llm.BaseURLOf]), and each line records what a [Player] needs to report
// them too: whether m takes native tools, its price and its base URL. A line
// that cannot be written fails the call.
func Record(m llm.Model, w io.Writer) llm.Model {
	return &recorder{inner: m, w: w}
}

// RecordFile records m's calls, as [Record] does, at the end of the file at
// path, which it creates if needed; a symbolic link, FIFO or device there
// is refused, not followed. Close the returned Closer when done.
func RecordFile(m llm.Model, path string) (llm.Model, io.Closer, error) {
	f, err := outfile.OpenAppend(path)
	if err != nil {
		return nil, nil, fmt.Errorf("replay: %w", err)
	}
	return Record(m, f), f, nil
}

type recorder struct {
	inner llm.Model
	mu    sync.Mutex // guards w
	w     io.Writer
}

var (
	_ llm.Streamer  = (*recorder)(nil)
	_ llm.Unwrapper = (*recorder)(nil)
)

// Unwrap returns the recorded model.
func (r *recorder) Unwrap() llm.Model { return r.inner }

func (r *recorder) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	l := r.start(req)
	resp, err := r.inner.Generate(ctx, req)
	if err != nil {
		l.Error = fromError(err)
	} else {
		l.Response = fromResponse(resp)
	}
	if werr := r.write(l); werr != nil {
		return nil, werr
	}
	return resp, err
}

func (r *recorder) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	s, ok := r.inner.(llm.Streamer)
	if !ok {
		return func(yield func(llm.Chunk, error) bool) {
			resp, err := r.Generate(ctx, req)
			yieldAll(yield, llm.Chunks(resp), err)
		}
	}
	return func(yield func(llm.Chunk, error) bool) {
		l := r.start(req)
		l.Stream = true
		var err error
		for ch, cerr := range s.Stream(ctx, req) {
			if cerr != nil {
				err = cerr
				break
			}
			l.Chunks = append(l.Chunks, fromChunk(ch))
			if !yield(ch, nil) {
				_ = r.write(l) // the caller has gone: no one to tell of an error
				return
			}
		}
		if err != nil {
			l.Error = fromError(err)
		}
		if werr := r.write(l); werr != nil {
			err = werr
		}
		if err != nil {
			yield(llm.Chunk{}, err)
		}
	}
}

// start begins the line of a call to make.
func (r *recorder) start(req llm.Request) *line {
	l := &line{Request: fromRequest(req), BaseURL: llm.BaseURLOf(r.inner)}
	if t, ok := llm.As[llm.ToolSupporter](r.inner); ok {
		l.NoNativeTools = !t.SupportsNativeTools()
	}
	if p, ok := llm.PriceOf(r.inner); ok {
		l.Price = &p
	}
	l.Key = l.Request.key()
	return l
}

func (r *recorder) write(l *line) error {
	l.Time = time.Now().UTC().Format(time.RFC3339)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return fmt.Errorf("replay: recording a call: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("replay: recording a call: %w", err)
	}
	return nil
}

// yieldAll yields chunks, then err when it is not nil.
func yieldAll(yield func(llm.Chunk, error) bool, chunks []llm.Chunk, err error) {
	for _, ch := range chunks {
		if !yield(ch, nil) {
			return
		}
	}
	if err != nil {
		yield(llm.Chunk{}, err)
	}
}
