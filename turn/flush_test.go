package turn_test

import (
	"context"
	"iter"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/turn"
)

// slowModel streams its text a few bytes at a time, pausing between pieces.
type slowModel struct {
	llm.Model
	pieces []string
	pause  time.Duration
}

func (m slowModel) Stream(ctx context.Context, _ llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		for _, p := range m.pieces {
			time.Sleep(m.pause)
			if !yield(llm.Chunk{Text: p}, nil) {
				return
			}
		}
	}
}

// A slow model's text is reported while it writes, not held back for a
// batch of the parser's until the reply ends.
func TestSlowStreamIsShownAsItComes(t *testing.T) {
	p, err := protocol.NewParser(tools)
	if err != nil {
		t.Fatal(err)
	}
	m := slowModel{Model: llmtest.New(), pieces: []string{"Hel", "lo, ", "this ", "is ", "slow", "."}, pause: 60 * time.Millisecond}
	start := time.Now()
	var first time.Duration
	_, err = turn.Turn{Model: m, Parser: p, Mode: turn.PTK, Stream: true}.Ask(context.Background(), llm.Request{}, func(e turn.Event) {
		if e.Kind == turn.EventText && first == 0 {
			first = time.Since(start)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if total := time.Since(start); first == 0 || first > total-100*time.Millisecond {
		t.Errorf("the first text came after %v of a %v reply: held back until the end", first, total)
	}
}
