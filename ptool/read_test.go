package ptool

import (
	"encoding/json"
	"testing"
)

// FuzzRead: no reply makes reading panic, and an answer read is valid JSON
// that fits the output schema.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		`<answer>{"sentiment": "positive", "confidence": 0.9}</answer>`,
		"```json\n{'sentiment': 'Positive', 'confidence': '0.9',}\n```",
		`Sure: {"sentiment": "neutral", "confidence": 1} ok`,
		`<cannot_answer>no</cannot_answer>`,
		`<think><answer></think><ANSWER>{"sentiment":"negative","confidence":"1e3"}`,
		`{"answer": {"sentiment": "positive", "confidence": 0.5}}`,
		`{"cannot_answer": "why"}`,
		`No <cannot_answer> needed: <answer>{"sentiment": "neutral", "confidence": 0}</answer>`,
		`{"sentiment": "neutral", "confidence": 1}`,
	} {
		f.Add(s)
	}
	in := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	out := json.RawMessage(`{"type":"object","properties":{"sentiment":{"type":"string","enum":["positive","negative","neutral"]},"confidence":{"type":"number"}},"required":["sentiment","confidence"],"additionalProperties":false}`)
	s, err := newSpec("classify", "Classify.", in, out, nil, "")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		structured, _ := s.readStructured(reply)
		for _, a := range []answer{s.readText(reply), structured} {
			if a.json == nil {
				continue
			}
			if err := s.out.Validate(a.json); err != nil {
				t.Errorf("read %q as %s, which does not fit: %v", reply, a.json, err)
			}
		}
	})
}
