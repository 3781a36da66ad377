package ptool_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/llm/catalog"
	"github.com/ptkit/ptk/llm/llmtest"
	"github.com/ptkit/ptk/llm/openai"
	"github.com/ptkit/ptk/ptool"
)

// Servers that take response_format and ignore it (Ollama Cloud,
// DeepSeek, LiteLLM proxies): the model writes what it likes.

// TestIgnoredBare: a bare output that fits the schema exactly is read,
// with the repair recorded, and not asked again.
func TestIgnoredBare(t *testing.T) {
	srv := newServer(t, func(int, map[string]any) (int, string) {
		return 200, openaiReply(`{"sentiment": "positive", "confidence": 0.9}`)
	})
	got, rec, err := classifier(openai.New(srv.URL, openai.WithMaxRetries(0))).CallRecord(context.Background(), review{Text: "love"})
	if err != nil || got != (sentiment{"positive", 0.9}) {
		t.Fatalf("Call = %+v, %v", got, err)
	}
	if len(rec.Attempts) != 1 || rec.Mode != ptool.ModeStructured || len(rec.Attempts[0].Repairs) != 1 ||
		!strings.Contains(rec.Attempts[0].Repairs[0], `without its {"answer": …} object`) {
		t.Errorf("record = %+v", rec)
	}
	// a bare string output, for an enum
	label := ptool.New[review, string]("label", "Label.", ptool.WithOutputEnum("spam", "ham"),
		ptool.WithModel(openai.New(newServer(t, func(int, map[string]any) (int, string) { return 200, openaiReply("ham") }).URL, openai.WithMaxRetries(0))))
	if s, err := label.Call(context.Background(), review{Text: "hi"}); err != nil || s != "ham" {
		t.Errorf("bare enum = %q, %v", s, err)
	}
}

// TestIgnoredBareAmbiguous: a bare object that does not fit exactly is not
// guessed at: it is an envelope failure.
func TestIgnoredBareAmbiguous(t *testing.T) {
	srv := newServer(t, func(int, map[string]any) (int, string) {
		return 200, openaiReply(`{"sentiment": "positive"}`)
	})
	_, rec, err := classifier(openai.New(srv.URL, openai.WithMaxRetries(0)), ptool.WithMode(ptool.ModeStructured), ptool.WithMaxAttempts(1)).
		CallRecord(context.Background(), review{Text: "love"})
	if !errors.Is(err, ptool.ErrAttempts) || !strings.Contains(strings.Join(rec.Attempts[0].Problems, " "), `"answer"`) {
		t.Errorf("err %v, record %+v", err, rec)
	}
}

// TestIgnoredTagged: the output between <answer> tags reads in structured
// mode too.
func TestIgnoredTagged(t *testing.T) {
	srv := newServer(t, func(int, map[string]any) (int, string) {
		return 200, openaiReply("Here you go.\n<answer>{\"sentiment\": \"negative\", \"confidence\": 0.7}</answer>")
	})
	got, rec, err := classifier(openai.New(srv.URL, openai.WithMaxRetries(0))).CallRecord(context.Background(), review{Text: "meh"})
	if err != nil || got != (sentiment{"negative", 0.7}) || len(rec.Attempts) != 1 {
		t.Fatalf("Call = %+v, %v, %+v", got, err, rec)
	}
	if !strings.Contains(strings.Join(rec.Attempts[0].Repairs, "; "), "<answer>") {
		t.Errorf("repairs = %q", rec.Attempts[0].Repairs)
	}
	// an abstention in tags, too
	srv2 := newServer(t, func(int, map[string]any) (int, string) {
		return 200, openaiReply("<cannot_answer>there is no review</cannot_answer>")
	})
	if _, err := classifier(openai.New(srv2.URL, openai.WithMaxRetries(0))).Call(context.Background(), review{}); !errors.Is(err, ptool.ErrAbstained) {
		t.Errorf("err = %v", err)
	}
}

// TestIgnoredSwitches: after one answer without the envelope that cannot
// be read, auto mode asks again in the protocol, and the caller's memory
// keeps the model in the protocol from then on.
func TestIgnoredSwitches(t *testing.T) {
	srv := newServer(t, func(_ int, body map[string]any) (int, string) {
		if body["response_format"] != nil {
			return 200, openaiReply("The review sounds positive to me, fairly sure.")
		}
		return 200, openaiReply(`<answer>{"sentiment": "positive", "confidence": 0.8}</answer>`)
	})
	m := openai.New(srv.URL, openai.WithMaxRetries(0))
	mem := &llm.NativeTools{}
	p := classifier(m, ptool.WithMemory(mem))
	got, rec, err := p.CallRecord(context.Background(), review{Text: "nice"})
	if err != nil || got != (sentiment{"positive", 0.8}) {
		t.Fatalf("Call = %+v, %v", got, err)
	}
	if len(rec.Attempts) != 2 || rec.Attempts[0].Mode != ptool.ModeStructured || rec.Attempts[1].Mode != ptool.ModeProtocol || rec.Mode != ptool.ModeProtocol {
		t.Errorf("record = %+v", rec)
	}
	retry := srv.body(1)
	if retry["response_format"] != nil {
		t.Errorf("the retry still asks for response_format")
	}
	if sys, _ := get(retry, "messages", 0, "content").(string); !strings.Contains(sys, "<answer>") {
		t.Errorf("the retry's system prompt is not the protocol's:\n%s", sys)
	}
	if !mem.Rejected(m, "ptool:structured") {
		t.Error("the memory does not remember the model")
	}
	// the next call, and another ptool sharing the memory, start in the protocol
	if _, rec, err := p.CallRecord(context.Background(), review{Text: "nice"}); err != nil || len(rec.Attempts) != 1 || rec.Mode != ptool.ModeProtocol {
		t.Errorf("next call: %+v, %v", rec, err)
	}
	if len(srv.bodies) != 3 {
		t.Errorf("%d requests, want 3", len(srv.bodies))
	}
	// structured mode, asked for, stays structured
	srv3 := newServer(t, func(int, map[string]any) (int, string) { return 200, openaiReply("positive, I think") })
	_, rec, err = classifier(openai.New(srv3.URL, openai.WithMaxRetries(0)), ptool.WithMode(ptool.ModeStructured)).CallRecord(context.Background(), review{Text: "x"})
	if !errors.Is(err, ptool.ErrAttempts) || len(srv3.bodies) != 3 || srv3.body(2)["response_format"] == nil {
		t.Errorf("structured mode: err %v, %d requests", err, len(srv3.bodies))
	}
}

// candidate is shaped like the distiller's own ptools' output: two long
// strings.
type candidate struct {
	Code string `json:"code"`
	Test string `json:"test"`
}

// TestIgnoredLongFields: the distiller's ptools (code and test as
// strings) read a bare answer from a server that ignores response_format.
func TestIgnoredLongFields(t *testing.T) {
	srv := newServer(t, func(int, map[string]any) (int, string) {
		return 200, openaiReply("```json\n{\"code\": \"package x\\n\\nfunc F() {}\\n\", \"test\": \"package x\\n\"}\n```")
	})
	p := ptool.New[review, candidate]("write_code", "Write code.", ptool.WithModel(openai.New(srv.URL, openai.WithMaxRetries(0))))
	got, err := p.Call(context.Background(), review{Text: "x"})
	if err != nil || got.Code != "package x\n\nfunc F() {}\n" || got.Test != "package x\n" {
		t.Errorf("Call = %+v, %v", got, err)
	}
}

// TestAbstentionInProse: prose that mentions the abstention tag before a
// real answer is not an abstention; the last tag the model opened decides.
func TestAbstentionInProse(t *testing.T) {
	want := sentiment{"positive", 0.9}
	for _, reply := range []string{
		"I will not use <cannot_answer> here, the review is clear.\n<answer>{\"sentiment\": \"positive\", \"confidence\": 0.9}</answer>",
		"No need for <cannot_answer>…</cannot_answer>: <answer>{\"sentiment\": \"positive\", \"confidence\": 0.9}</answer>",
	} {
		got, err := classifier(llmtest.New(llmtest.Text(reply)), ptool.WithMaxAttempts(1)).Call(context.Background(), review{Text: "love"})
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v", reply, got, err)
		}
	}
	// a tag inside the answer is its data
	label := ptool.New[review, string]("note", "Note.", ptool.WithModel(llmtest.New(llmtest.Text("<answer>\"not a <cannot_answer> case\"</answer>"))))
	if s, err := label.Call(context.Background(), review{Text: "x"}); err != nil || s != "not a <cannot_answer> case" {
		t.Errorf("a tag inside the answer: %q, %v", s, err)
	}
	for _, reply := range []string{
		"I cannot give an <answer> here. <cannot_answer>the review is empty</cannot_answer>",
		"<answer>{\"sentiment\": \"positive\"}</answer> On second thought: <cannot_answer>the review is empty</cannot_answer>",
		"<cannot_answer>the review is empty",
	} {
		_, err := classifier(llmtest.New(llmtest.Text(reply)), ptool.WithMaxAttempts(1)).Call(context.Background(), review{Text: ""})
		var ae *ptool.AbstainedError
		if !errors.As(err, &ae) || ae.Reason != "the review is empty" {
			t.Errorf("%q: err = %v", reply, err)
		}
	}
}

// TestIgnoredOneModelOfAProxy: a proxy serves several models; the one that
// ignores response_format is remembered, not the others.
func TestIgnoredOneModelOfAProxy(t *testing.T) {
	srv := newServer(t, func(_ int, body map[string]any) (int, string) {
		if body["model"] == "ignores" && body["response_format"] != nil {
			return 200, openaiReply("positive, I'd say")
		}
		if body["response_format"] == nil {
			return 200, openaiReply(`<answer>{"sentiment": "positive", "confidence": 0.7}</answer>`)
		}
		return 200, openaiReply(`{"answer": {"sentiment": "positive", "confidence": 0.7}}`)
	})
	client := openai.New(srv.URL, openai.WithMaxRetries(0))
	ignores, takes := catalog.Named(client, "ignores"), catalog.Named(client, "takes")
	mem := &llm.NativeTools{}
	for _, m := range []llm.Model{ignores, takes, ignores, takes} {
		if _, err := classifier(m, ptool.WithMemory(mem)).Call(context.Background(), review{Text: "nice"}); err != nil {
			t.Fatal(err)
		}
	}
	if !mem.Rejected(ignores, "ptool:structured:ignores") || mem.Rejected(takes, "ptool:structured:takes") {
		t.Error("the memory does not tell the models apart")
	}
	// ignores: structured then protocol, then protocol; takes: structured twice
	var got []string
	for i := range srv.bodies {
		b := srv.body(i)
		got = append(got, fmt.Sprintf("%v:%v", b["model"], b["response_format"] != nil))
	}
	if strings.Join(got, " ") != "ignores:true ignores:false takes:true ignores:false takes:true" {
		t.Errorf("requests: %v", got)
	}
}
