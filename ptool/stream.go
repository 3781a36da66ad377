package ptool

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"reflect"
	"strings"

	"github.com/ptkit/ptk/lenient"
)

// Partial is a call's output as CallStream reads it.
type Partial[Out any] struct {
	// Value is the output read so far: the fields whose values are
	// complete, the others zero; a list with the items complete so far. A
	// string or a number is set once it is complete, never while it is
	// still being written.
	Value Out
	// JSON is the output read so far as JSON: exactly the fields and items
	// read (Value cannot tell a zero field from one not yet read).
	JSON json.RawMessage
	// Attempt counts the model calls, from 1. Within an attempt, a field
	// is never reported with a value it later loses; an answer that does
	// not fit makes the next attempt start over.
	Attempt int
	// Done marks the last Partial: Value is the output, as Call returns
	// it, and Record the call's record.
	Done   bool
	Record *Record
}

// CallStream calls the ptool as Call does, asking the model to stream its
// answer (when it can, see llm.Streamer), and yields the output as it is
// read: each time a field or an item of an object or list output is
// complete (instructor's Partial, BAML's semantic streaming), then the
// output itself with Done set. A scalar output comes only done. The error
// is Call's, yielded last; breaking out of the loop cancels the call.
func (p *PTool[In, Out]) CallStream(ctx context.Context, in In) iter.Seq2[Partial[Out], error] {
	return func(yield func(Partial[Out], error) bool) {
		raw, err := encodeInput(in)
		if err != nil {
			yield(Partial[Out]{}, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stopped := false
		partial := func(attempt int, js []byte) {
			if stopped {
				return
			}
			var v Out
			if json.Unmarshal(js, &v) != nil {
				return // not yet of the output's Go type
			}
			if !yield(Partial[Out]{Value: v, JSON: js, Attempt: attempt}, nil) {
				stopped = true
				cancel()
			}
		}
		var out Out
		rec, err := p.fn.callWith(ctx, raw, in, &out, partial)
		if stopped {
			return
		}
		if err != nil {
			yield(Partial[Out]{Attempt: len(rec.Attempts), Record: rec}, err)
			return
		}
		yield(Partial[Out]{Value: out, JSON: rec.Output, Attempt: len(rec.Attempts), Done: true, Record: rec}, nil)
	}
}

// partialReader reads the output of one attempt as the model writes it:
// it finds where the value begins in the text (after <answer>, or the
// {"answer": …} object of structured output, or a code fence), reads it
// with the lenient reader, and gives each new state of it that extends
// the last one.
type partialReader struct {
	spec  *Spec
	style style
	buf   []byte
	r     *lenient.Reader
	done  bool
	// progress is the reader's Progress when it was last looked at
	progress int
	last     any    // the last output given, decoded
	lastJ    []byte // and as JSON
}

// streamable reports whether an output is read as it comes: an object or
// a list (a scalar is complete only at the end).
func (s *Spec) streamable() bool {
	return strings.HasPrefix(s.outputType, "{") || strings.HasPrefix(s.outputType, "[]") || strings.HasPrefix(s.outputType, "map[")
}

// feed adds the next piece of the answer and returns the output read so
// far, as JSON, when it has grown; nil otherwise.
func (p *partialReader) feed(piece string) []byte {
	if p.done || piece == "" {
		return nil
	}
	p.buf = append(p.buf, piece...)
	if p.r == nil {
		i := p.begin()
		if i < 0 {
			return nil
		}
		p.r = lenient.NewReader(i, false)
	}
	switch p.r.Feed(p.buf, false) {
	case lenient.Fail:
		p.done = true
		return nil
	case lenient.Done:
		p.done = true
	}
	if progress := p.r.Progress(); progress == p.progress {
		return nil // nothing completed since the last piece
	} else {
		p.progress = progress
	}
	n := p.r.Partial()
	if n != nil && p.style != styleProtocol {
		n = p.unwrap(n)
	}
	if n == nil || n.Kind != lenient.Object && n.Kind != lenient.Array {
		return nil
	}
	n, _ = p.spec.out.Coerce(n, false)
	if len(n.Kids) == 0 {
		return nil // nothing read yet
	}
	var b bytes.Buffer
	if json.Compact(&b, lenient.AppendJSON(nil, n, p.buf)) != nil {
		return nil
	}
	js := b.Bytes()
	var v any
	if json.Unmarshal(js, &v) != nil || p.lastJ != nil && (bytes.Equal(js, p.lastJ) || !extends(p.last, v)) {
		return nil
	}
	p.last, p.lastJ = v, js
	return js
}

// begin finds where the output's JSON begins in the text so far: -1 while
// it cannot tell. In protocol mode it is the first object or list after
// <answer> (a fence between them is passed over), or at the start of a
// reply that begins with one; in structured mode the first object, the
// {"answer": …} envelope or the bare output, or a list. Reasoning is
// passed over; anything else gives up (the whole answer is read at the
// end, as always).
func (p *partialReader) begin() int {
	text := string(p.buf)
	from := 0
	if i, _ := indexFold(text, "<think>"); i >= 0 {
		_, j := indexFold(text[i:], "</think>")
		if j < 0 {
			return -1 // still reasoning
		}
		from = i + j
	}
	if p.style == styleProtocol {
		if _, j := indexFold(text[from:], "<answer>"); j >= 0 {
			from += j
		} else if k := strings.IndexFunc(text[from:], notSpace); k < 0 || !strings.ContainsRune("{[`", rune(text[from+k])) {
			return -1 // prose before the <answer> tag, or nothing yet
		}
	}
	i := from
	for i < len(text) {
		switch c := text[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(text[i:], "```"):
			nl := strings.IndexByte(text[i:], '\n')
			if nl < 0 {
				return -1
			}
			i += nl + 1
		case c == '{' || c == '[':
			return i
		case len(text)-i < 3 && strings.HasPrefix("```", text[i:]):
			return -1 // maybe a fence
		default:
			p.done = true
			return -1
		}
	}
	return -1
}

func notSpace(r rune) bool { return r != ' ' && r != '\t' && r != '\n' && r != '\r' }

// unwrap returns the output inside a structured answer: the value of its
// "answer" member, or the object itself when its first member is another
// (a bare output); nil while it cannot tell, or for an abstention.
func (p *partialReader) unwrap(n *lenient.Node) *lenient.Node {
	if n.Kind != lenient.Object {
		return n
	}
	if len(n.Keys) == 0 {
		return nil
	}
	switch n.Keys[0] {
	case "answer":
		return n.Kids[0]
	case "cannot_answer":
		p.done = true
		return nil
	}
	return n
}

// extends reports whether next holds every value prev holds, where prev
// has it: the members of an object, the items of a list (more may
// follow), a scalar equal.
func extends(prev, next any) bool {
	switch x := prev.(type) {
	case map[string]any:
		y, ok := next.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !extends(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := next.([]any)
		if !ok || len(y) < len(x) {
			return false
		}
		for i := range x {
			if !extends(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(prev, next)
}
