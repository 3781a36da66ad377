package ptool_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ptkit/ptk/ptool"
)

func TestAnswerReader(t *testing.T) {
	a, err := ptool.NewAnswerReader([]byte(`{"type":"object","properties":{"files":{"type":"integer","description":"How many Go files."},"module":{"type":"string"}},"required":["files","module"]}`))
	if err != nil {
		t.Fatal(err)
	}
	ins := a.Instructions()
	for _, want := range []string{"<answer>", "files", "How many Go files.", "module", "<cannot_answer>"} {
		if !strings.Contains(ins, want) {
			t.Errorf("the instructions lack %q:\n%s", want, ins)
		}
	}
	for text, want := range map[string]string{
		`<answer>{"files": 3, "module": "example.com/hello"}</answer>`:                         `{"files":3,"module":"example.com/hello"}`,
		"Here it is:\n```json\n{'files': '3', 'module': 'example.com/hello',}\n```":            `{"files":3,"module":"example.com/hello"}`,
		`<think>count</think>There are <answer>{"module":"m","files":2}</answer> in the repo.`: `{"module":"m","files":2}`,
	} {
		got, err := a.Read(text)
		if err != nil || string(got) != want {
			t.Errorf("Read(%q) = %s, %v; want %s", text, got, err, want)
		}
	}
	if _, err := a.Read(`<answer>{"files": "many"}</answer>`); err == nil || !strings.Contains(err.Error(), "module") {
		t.Errorf("a value that does not fit: %v", err)
	}
	if _, err := a.Read(`<cannot_answer>no Go files here</cannot_answer>`); !errors.Is(err, ptool.ErrAbstained) {
		t.Errorf("an abstention: %v", err)
	}
	if _, err := ptool.NewAnswerReader([]byte(`{"type": 5}`)); err == nil {
		t.Error("a schema that does not compile was taken")
	}
}
