package llm_test

import (
	"testing"
	"time"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/llmtest"
)

func TestNativeTools(t *testing.T) {
	var mem llm.NativeTools
	a := withBase{llmtest.New()}
	if mem.Rejected(a, "qwen3:8b") {
		t.Fatal("a fresh memory remembers a rejection")
	}
	mem.Reject(llm.Priced(a, llm.Price{}), "qwen3:8b")
	if !mem.Rejected(a, "qwen3:8b") {
		t.Error("a rejection through a wrapper is not remembered for the same server and name")
	}
	if mem.Rejected(a, "llama3") {
		t.Error("a rejection is remembered for another model name")
	}
	var nilMem *llm.NativeTools
	if nilMem.Rejected(a, "qwen3:8b") {
		t.Error("a nil memory remembers")
	}
	short := llm.NativeTools{TTL: time.Millisecond}
	short.Reject(a, "m")
	time.Sleep(5 * time.Millisecond)
	if short.Rejected(a, "m") {
		t.Error("a rejection outlived its TTL")
	}
}
