package replay

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ptkit/ptk/llm"
)

// ErrMiss is wrapped by the error of a call that the recording does not
// hold; the error is an *llm.Error of kind llm.ErrBadRequest.
var ErrMiss = errors.New("replay: no recording of the request")

// Player is a model that answers from a recording, by the key of the request
// (see the package documentation): streamed, a recorded stream replays its
// chunks, and a whole answer comes as one chunk with the text and one per
// call; not streamed, a recorded stream is assembled with [llm.Collector].
// A recorded error comes back as the same kind of error. It is safe for
// concurrent use; identical requests made at the same time get the recorded
// answers in the order they arrive.
type Player struct {
	name          string
	calls         int
	noNativeTools bool
	recorded      llm.Model // what the recording says of the model: see Unwrap
	byKey         map[string]*recorded
	reqs          []*recorded // in the order first recorded

	mu sync.Mutex // guards the recorded's next
}

// recorded is the answers recorded for one request.
type recorded struct {
	line  int     // where it was first recorded, from 1
	req   request // its canonical form
	lines []*line
	next  int
}

var (
	_ llm.Streamer      = (*Player)(nil)
	_ llm.ToolSupporter = (*Player)(nil)
	_ llm.Unwrapper     = (*Player)(nil)
	_ llm.BaseURLer     = recordedModel{}
)

// Open reads the recording at path.
func Open(path string) (*Player, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	return load(f, path)
}

// Load reads a recording from r.
func Load(r io.Reader) (*Player, error) { return load(r, "the recording") }

func load(r io.Reader, name string) (*Player, error) {
	p := &Player{name: name, byKey: map[string]*recorded{}}
	var (
		price *llm.Price
		base  string
	)
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		b, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			l := new(line)
			if err := json.Unmarshal(b, l); err != nil {
				return nil, fmt.Errorf("replay: line %d of %s: %w", n, name, err)
			}
			if l.Key == "" {
				return nil, fmt.Errorf("replay: line %d of %s: not a recorded call (no key)", n, name)
			}
			if l.Error != nil && l.Error.err() == nil {
				return nil, fmt.Errorf("replay: line %d of %s: unknown error kind %q", n, name, l.Error.Kind)
			}
			k := l.Request.key()
			rec := p.byKey[k]
			if rec == nil {
				rec = &recorded{line: n, req: l.Request.canonical()}
				p.byKey[k] = rec
				p.reqs = append(p.reqs, rec)
			}
			rec.lines = append(rec.lines, l)
			p.calls++
			p.noNativeTools = p.noNativeTools || l.NoNativeTools
			price = cmp.Or(l.Price, price)
			base = cmp.Or(l.BaseURL, base)
		}
		if err == io.EOF {
			p.recorded = recordedModel{p, base}
			if price != nil {
				p.recorded = llm.Priced(p.recorded, *price)
			}
			return p, nil
		}
		if err != nil {
			return nil, fmt.Errorf("replay: reading %s: %w", name, err)
		}
	}
}

// Generate answers with the recorded answer.
func (p *Player) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	l, err := p.answer(ctx, req)
	switch {
	case err != nil:
		return nil, err
	case l.Error != nil:
		return nil, l.Error.err()
	case l.Stream:
		var c llm.Collector
		for _, ch := range l.Chunks {
			c.Add(ch.llm())
		}
		return c.Response(), nil
	}
	return l.Response.llm(), nil
}

// Stream answers with the recorded answer, in chunks.
func (p *Player) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		l, err := p.answer(ctx, req)
		if err != nil {
			yield(llm.Chunk{}, err)
			return
		}
		chunks := llm.Chunks(l.Response.llm())
		if l.Stream {
			chunks = nil
			for _, ch := range l.Chunks {
				chunks = append(chunks, ch.llm())
			}
		}
		if l.Error != nil {
			err = l.Error.err()
		}
		yieldAll(yield, chunks, err)
	}
}

// SupportsNativeTools is false when the recorded model said it does not
// take native tools.
func (p *Player) SupportsNativeTools() bool { return !p.noNativeTools }

// Unwrap returns the recorded model as the recording describes it: a model
// that answers as p does, with the price ([llm.PriceOf]) and the base URL
// ([llm.BaseURLOf]) the recorded model had, when the recording says (the
// last line that says wins).
func (p *Player) Unwrap() llm.Model { return p.recorded }

// recordedModel is the model a recording was made with, as far as the
// recording tells: it answers from the recording.
type recordedModel struct {
	p    *Player
	base string
}

func (m recordedModel) BaseURL() string { return m.base }

func (m recordedModel) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	return m.p.Generate(ctx, req)
}

func (m recordedModel) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.Chunk, error] {
	return m.p.Stream(ctx, req)
}

// answer finds the next recorded answer to req.
func (p *Player) answer(ctx context.Context, req llm.Request) (*line, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q := fromRequest(req)
	k := q.key()
	p.mu.Lock()
	defer p.mu.Unlock()
	rec := p.byKey[k]
	if rec == nil {
		return nil, p.miss(q.canonical(), k)
	}
	l := rec.lines[rec.next]
	if rec.next < len(rec.lines)-1 {
		rec.next++
	}
	return l, nil
}

// miss is the error for a request (canonical) the recording does not hold.
func (p *Player) miss(now request, key string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "replay: no recording of this request (model %q, %d messages, key %s) in %s, which holds %d calls of %d distinct requests",
		now.Model, len(now.Messages), key, p.name, p.calls, len(p.reqs))
	var best *recorded
	bestScore := -1
	for _, r := range p.reqs {
		s := 2 * samePrefix(r.req.Messages, now.Messages)
		if len(r.req.Messages) == len(now.Messages) {
			s++
		}
		if r.req.Model == now.Model {
			s += 1 << 30
		}
		if s > bestScore {
			best, bestScore = r, s
		}
	}
	if best != nil {
		fmt.Fprintf(&b, "; the closest, on line %d, %s", best.line, differs(best.req, now))
	}
	return &llm.Error{Kind: llm.ErrBadRequest, Message: b.String(), Err: ErrMiss}
}

// samePrefix counts the messages a and b start with alike.
func samePrefix(a, b []message) int {
	n := 0
	for n < len(a) && n < len(b) && jsonOf(a[n]) == jsonOf(b[n]) {
		n++
	}
	return n
}

// differs says where a recorded request differs from now (both canonical).
func differs(rec, now request) string {
	if rec.Model != now.Model {
		return fmt.Sprintf("is for model %q", rec.Model)
	}
	if i := samePrefix(rec.Messages, now.Messages); i < min(len(rec.Messages), len(now.Messages)) {
		x, y := snippets(jsonOf(rec.Messages[i]), jsonOf(now.Messages[i]))
		return fmt.Sprintf("has %d messages and differs first at message %d (%s): recorded %s, now %s",
			len(rec.Messages), i, now.Messages[i].Role, x, y)
	}
	if len(rec.Messages) != len(now.Messages) {
		return fmt.Sprintf("starts with the same %d messages, but has %d", min(len(rec.Messages), len(now.Messages)), len(rec.Messages))
	}
	rec.Messages, now.Messages = nil, nil
	x, y := snippets(jsonOf(rec), jsonOf(now))
	return fmt.Sprintf("has the same messages, but recorded %s, now %s", x, y)
}

func jsonOf(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// snippets cuts a and b around where they first differ.
func snippets(a, b string) (string, string) {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	start := max(0, i-30)
	for start > 0 && !utf8.RuneStart(a[start]) {
		start--
	}
	cut := func(s string) string {
		end := min(len(s), i+40)
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out := s[start:end]
		if start > 0 {
			out = "…" + out
		}
		if end < len(s) {
			out += "…"
		}
		return out
	}
	return cut(a), cut(b)
}
