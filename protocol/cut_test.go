package protocol

import (
	"strings"
	"testing"
	"time"
)

// TestCutEnvelopeNotACall is FuzzParse's find: a call's JSON cut before its
// last brace, whose content is not a call, after an earlier call. Reading
// it once hung the parser (the failed value lost where it failed).
func TestCutEnvelopeNotACall(t *testing.T) {
	text := "<tool_call>\n{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}\n</tool_call>\n<tool_call>\n{\"n\x02\x00e\": \"python\""
	p, err := NewParser(fuzzTools)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Parsed)
	go func() { done <- p.Parse(text) }()
	select {
	case r := <-done:
		if len(r.Attempts) != 2 || r.Attempts[1].Err == nil || !strings.Contains(r.Attempts[1].Err.Message, "cut off") {
			t.Errorf("want the first call and a truncated second: %+v", r.Attempts)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the parse does not end")
	}
}
