package turn_test

import (
	"context"
	"fmt"
	"iter"
	"strings"
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

// Pause is called once per piece of a stream, after what the piece made
// has been reported: a caller that buffers the events sends each piece's
// together, before the turn waits for the next.
func TestPauseAfterEachPiece(t *testing.T) {
	p, err := protocol.NewParser(tools)
	if err != nil {
		t.Fatal(err)
	}
	pieces := []string{"Hel", "lo, ", "this ", "is ", "slow", "."}
	m := slowModel{Model: llmtest.New(), pieces: pieces, pause: 60 * time.Millisecond}
	var log []string
	pending := ""
	tn := turn.Turn{Model: m, Parser: p, Mode: turn.PTK, Stream: true, Pause: func() {
		log = append(log, "pause:"+pending)
		pending = ""
	}}
	rep, err := tn.Ask(context.Background(), llm.Request{}, func(e turn.Event) {
		if e.Kind == turn.EventText {
			pending += e.Text
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != len(pieces) {
		t.Fatalf("%d pauses for %d pieces: %q", len(log), len(pieces), log)
	}
	// A slow model's text is reported as it comes, each piece's before its
	// pause (the parser reads what each read brought before the turn waits
	// for the next); what the parser still holds (a word that may begin a
	// call) comes at the end.
	shown, all := 0, ""
	for _, l := range log {
		if l != "pause:" {
			shown++
		}
		all += strings.TrimPrefix(l, "pause:")
	}
	if shown < len(pieces)/2 || all+pending != "Hello, this is slow." || rep.Text != all+pending {
		t.Errorf("pauses %q, then %q; text %q", log, pending, rep.Text)
	}
}

// burstModel streams chunks as a provider's client gives them: More set on
// every chunk of a burst but its last.
type burstModel struct {
	llm.Model
	bursts [][]string
}

func (m burstModel) Stream(ctx context.Context, _ llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		for _, b := range m.bursts {
			for i, p := range b {
				if !yield(llm.Chunk{Text: p, More: i < len(b)-1}, nil) {
					return
				}
			}
		}
	}
}

// Chunks that arrived together (More) are one pause: what one read from
// the network brought is sent in one write, and no burst's last chunk is
// held back for the next burst.
func TestPauseOncePerBurst(t *testing.T) {
	m := burstModel{Model: llmtest.New(), bursts: [][]string{{"Hel", "lo", ", "}, {"this "}, {"is", " one", " answer", "."}}}
	var log []string
	pending := ""
	tn := turn.Turn{Model: m, Mode: turn.PTK, Stream: true, Pause: func() {
		log = append(log, pending)
		pending = ""
	}}
	if _, err := tn.Ask(context.Background(), llm.Request{}, func(e turn.Event) {
		if e.Kind == turn.EventText {
			pending += e.Text
		}
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"Hello, ", "this ", "is one answer."}
	if strings.Join(log, "|") != strings.Join(want, "|") || pending != "" {
		t.Errorf("pauses after %q (then %q), want after %q", log, pending, want)
	}
}

// A fast model's text, with a parser, is read burst by burst as it
// arrives, not all after the reply's last byte: the parser reads what a
// read brought before the turn waits for the next.
func TestParsedBurstsGoOutAsTheyCome(t *testing.T) {
	p, err := protocol.NewParser(tools)
	if err != nil {
		t.Fatal(err)
	}
	m := burstModel{Model: llmtest.New(), bursts: [][]string{
		{"Hel", "lo, ", "world. "}, {"This ", "is ", "fast. "}, {"<PTK_CALL>\n{\"tool\": \"read_file\", ", "\"args\": {\"path\": \"a.go\"}}\n</PTK_CALL>"}, {"Done."}}}
	var log []string
	pending := ""
	tn := turn.Turn{Model: m, Parser: p, Mode: turn.PTK, Stream: true, Pause: func() {
		log = append(log, pending)
		pending = ""
	}}
	if _, err := tn.Ask(context.Background(), llm.Request{}, func(e turn.Event) {
		switch e.Kind {
		case turn.EventText:
			pending += e.Text
		case turn.EventCallStart:
			pending += "[call]"
		case turn.EventCallEnd:
			pending += "[end]"
		}
	}); err != nil {
		t.Fatal(err)
	}
	// The parser holds a reply's last word (it may begin a call) until
	// what follows shows it does not.
	if len(log) != 4 || log[0] != "Hello, world." || log[1] != " This is fast." || log[2] != "[call][end]" {
		t.Errorf("pauses after %q (then %q): the bursts were not read as they came", log, pending)
	}
}

// BenchmarkAskDrip reads a reply with a 64 KB call streamed two bytes a
// read, the parser reading after every read, against the same reply in
// one read: an upstream that drips a long call must cost the turn time in
// proportion to its bytes, not to their square (the parser resumes where
// it stopped; it does not read the call again from its start).
func BenchmarkAskDrip(b *testing.B) {
	p, err := protocol.NewParser(tools)
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{16 << 10, 64 << 10} {
		body := "Some prose first.\n<PTK_CALL>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"" + strings.Repeat("a", size) + "\"}}\n</PTK_CALL>"
		var pieces []string
		for i := 0; i < len(body); i += 2 {
			pieces = append(pieces, body[i:min(i+2, len(body))])
		}
		drip := make([][]string, len(pieces))
		for i, s := range pieces {
			drip[i] = []string{s}
		}
		for _, c := range []struct {
			name   string
			bursts [][]string
		}{{"one-read", [][]string{pieces}}, {"drip", drip}} {
			b.Run(fmt.Sprintf("%dKB/%s", size>>10, c.name), func(b *testing.B) {
				tn := turn.Turn{Model: burstModel{Model: llmtest.New(), bursts: c.bursts}, Parser: p, Mode: turn.PTK, Stream: true}
				b.ReportAllocs()
				for b.Loop() {
					rep, err := tn.Ask(context.Background(), llm.Request{}, nil)
					if err != nil || len(rep.Attempts) != 1 || rep.Attempts[0].Err != nil {
						b.Fatalf("%v, %+v", err, rep.Attempts)
					}
				}
			})
		}
	}
}
