package ptool_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/ptool"
)

// instant is a model that answers at once, always the same.
type instant struct{ resp llm.Response }

func (m *instant) Generate(context.Context, llm.Request) (*llm.Response, error) {
	r := m.resp
	return &r, nil
}

// BenchmarkCall measures what a ptool call costs beside the model: the
// prompt, the model call through the turn, reading, checking and decoding
// the answer, and the record.
func BenchmarkCall(b *testing.B) {
	for _, bc := range []struct{ name, reply string }{
		{"clean", `<answer>{"sentiment": "positive", "confidence": 0.9}</answer>`},
		{"repaired", "Here you go:\n```json\n{'sentiment': 'Positive', 'confidence': '0.9',}\n```"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m := &instant{llm.Response{Content: bc.reply}}
			p := classifier(m, ptool.WithExample(review{Text: "Broke after a day."}, sentiment{Sentiment: "negative", Confidence: 0.95}))
			ctx := context.Background()
			in := review{Text: "I love it! Best purchase this year."}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Call(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestCallAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	m := &instant{llm.Response{Content: `<answer>{"sentiment": "positive", "confidence": 0.9}</answer>`}}
	p := classifier(m)
	in := review{Text: "I love it!"}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := p.Call(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 50 {
		t.Errorf("%v allocations per call, want at most 50", allocs)
	}
}

// BenchmarkDistilledCode measures a distilled function whose code answers:
// the code's answer checked against the output schema, and the record.
func BenchmarkDistilledCode(b *testing.B) {
	p := classifier(&instant{})
	d := ptool.Distill(func(context.Context, review) (sentiment, error) { return sentiment{"positive", 0.9}, nil }, p)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Call(ctx, review{Text: "I love it"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStream compares a streamed call read whole (Call) with the same
// call read as it comes (CallStream), on an answer of 20 items in pieces of
// 4 bytes: what the partial outputs cost.
func BenchmarkStream(b *testing.B) {
	var items strings.Builder
	for i := range 20 {
		if i > 0 {
			items.WriteString(", ")
		}
		fmt.Fprintf(&items, `{"sku": "SKU-%d", "qty": %d}`, i, i+1)
	}
	reply := `<answer>{"customer": "Ada Lovelace", "items": [` + items.String() + `], "total": 99.5, "rush": true}</answer>`
	model := func() *llmtest.Script {
		replies := make([]llmtest.Reply, 1<<16)
		for i := range replies {
			replies[i] = llmtest.Text(reply)
		}
		m := llmtest.New(replies...)
		m.ChunkSize = 4
		return m
	}
	ctx := context.Background()
	in := review{Text: "an order"}
	b.Run("Call", func(b *testing.B) {
		p := ptool.New[review, purchase]("read_order", "Read the order.", ptool.WithModel(model()), ptool.WithStream(true))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Call(ctx, in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("CallStream", func(b *testing.B) {
		p := ptool.New[review, purchase]("read_order", "Read the order.", ptool.WithModel(model()))
		b.ReportAllocs()
		for b.Loop() {
			for _, err := range p.CallStream(ctx, in) {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
