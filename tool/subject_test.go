package tool_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ptkit/ptk/tool"
)

func TestSubjectThroughWrappers(t *testing.T) {
	type args struct {
		Command string `json:"command"`
	}
	bash := tool.New("bash", "runs a command", func(_ context.Context, a args) (string, error) { return a.Command, nil },
		tool.WithSubject(func(a args) tool.Subject { return tool.Subject{Command: a.Command} }))
	wrapped := tool.Wrap(bash, tool.Timeout(time.Second), tool.Limit(100, 10))
	raw := json.RawMessage(`{"command": "go test ./..."}`)
	if got := tool.SubjectOf(wrapped, raw); got.Command != "go test ./..." {
		t.Errorf("SubjectOf(wrapped) = %+v, want the command", got)
	}
	if got := tool.SubjectOf(wrapped, json.RawMessage(`{"command": 3}`)); got != (tool.Subject{}) {
		t.Errorf("SubjectOf(bad args) = %+v, want the zero Subject", got)
	}
	plain := tool.New("echo", "echoes", func(_ context.Context, a args) (string, error) { return a.Command, nil })
	if got := tool.SubjectOf(tool.Wrap(plain, tool.Limit(1, 1)), raw); got != (tool.Subject{}) {
		t.Errorf("SubjectOf(a tool that declares none) = %+v", got)
	}
	res, err := wrapped.Run(context.Background(), raw)
	if err != nil || res.Content != "go test ./..." {
		t.Errorf("Run = %+v, %v", res, err)
	}
}
