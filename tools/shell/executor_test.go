package shell

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// terminal stands for an editor's terminal: it runs nothing, and answers
// with the outcome it is given.
type terminal struct {
	got     []Command
	outcome Outcome
	err     error
}

func (e *terminal) Exec(_ context.Context, c Command) (Outcome, error) {
	e.got = append(e.got, c)
	return e.outcome, e.err
}

func TestExecutor(t *testing.T) {
	dir := t.TempDir()
	term := &terminal{}
	s, err := New(dir, WithExecutor(term), WithDefaultTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		outcome Outcome
		args    string
		want    string
		isErr   bool
	}{
		{Outcome{Output: "ok\n"}, `{"command": "go test ./..."}`, "ok\nexit code 0", false},
		{Outcome{Output: "FAIL", ExitCode: 1}, `{"command": "go test ./..."}`, "FAIL\nexit code 1", false},
		{Outcome{ExitCode: 137, Signal: "SIGKILL"}, `{"command": "sleep 9"}`, "(no output)\nexit code 137 (killed by signal SIGKILL)", false},
		{Outcome{Output: "half", TimedOut: true}, `{"command": "sleep 9", "timeout": 1}`, "half\ntimed out after 1s; it was killed", true},
		{Outcome{Failed: errors.New("no shell")}, `{"command": "x"}`, "(no output)\nbash failed: no shell", true},
	} {
		term.outcome = c.outcome
		res, err := s.Tool().Run(context.Background(), []byte(c.args))
		if err != nil || res.Content != c.want || res.IsError != c.isErr {
			t.Errorf("%s with %+v: %q (error %v), %v; want %q", c.args, c.outcome, res.Content, res.IsError, err, c.want)
		}
	}
	first := term.got[0]
	if !slices.Equal(first.Argv, []string{"bash", "-c", "go test ./..."}) || first.Dir != dir || first.Line != "go test ./..." ||
		first.Timeout != 30*time.Second || first.MaxOutput != DefaultMaxOutput || !slices.Contains(first.Env, "PTK=1") {
		t.Errorf("the executor got %+v", first)
	}
	if got := term.got[3].Timeout; got != time.Second {
		t.Errorf("the call's timeout reached the executor as %v", got)
	}
	term.err = errors.New("the terminal is gone")
	if res, _ := s.Tool().Run(context.Background(), []byte(`{"command": "ls"}`)); !res.IsError || !strings.Contains(res.Content, "the terminal is gone") {
		t.Errorf("a failing executor: %+v", res)
	}
	if _, err := New(dir, WithExecutor(term), WithSandbox()); err == nil {
		t.Error("a sandbox with an executor was taken")
	}
}
