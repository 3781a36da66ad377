package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/internal/version"
	"github.com/ptkit/ptk/trace"
)

// The binary says the version its build information holds, on --version
// and in ptk version.
func TestVersionFromBuildInfo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := ptkBinary(t)
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	want := version.From(bi)
	for _, args := range [][]string{{"--version"}, {"-v"}} {
		out, err := exec.Command(bin, args...).Output()
		if err != nil || string(out) != "ptk "+want.String()+"\n" {
			t.Errorf("ptk %s = %q (%v), want %q", args[0], out, err, "ptk "+want.String()+"\n")
		}
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || string(out) != want.Long() {
		t.Errorf("ptk version = %q (%v), want %q", out, err, want.Long())
	}
	if !strings.Contains(want.Long(), bi.GoVersion) {
		t.Errorf("ptk version does not name the toolchain %s: %q", bi.GoVersion, want.Long())
	}
	// In process, the test binary's own information.
	if code, out, _ := runPTK(t, "", "--version"); code != 0 || out != "ptk "+version.Get().String()+"\n" {
		t.Errorf("in process: exit %d, %q", code, out)
	}
}

// A mistake in a command's arguments is a usage error, exit status 2, as a
// bad flag is: cobra's own checks too.
func TestArgumentMistakesExit2(t *testing.T) {
	for _, args := range [][]string{
		{"lisst"}, {"traces", "lisst"}, {"traces", "list", "extra"}, {"conversations", "lisst"},
		{"ptool", "lisst"}, {"workflow", "lisst"}, {"refactor", "lisst"}, {"version", "extra"},
		{"models", "extra"}, {"conversations", "show"}, {"run", "--no-such-flag", "x"},
	} {
		code, _, errOut := runPTK(t, "", args...)
		if code != 2 || !strings.HasPrefix(errOut, "ptk: ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("ptk %v: exit %d, stderr %q; want exit 2 and one line", args, code, errOut)
		}
	}
}

// The root's help lists the commands by group, in commandGroups' order.
func TestRootHelpGrouped(t *testing.T) {
	code, out, _ := runPTK(t, "", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	at := 0
	for _, g := range commandGroups {
		i := strings.Index(out[at:], "\n"+g.title+"\n")
		if i < 0 {
			t.Fatalf("no group %q after offset %d in:\n%s", g.title, at, out)
		}
		at += i + len(g.title) + 2
		end := strings.Index(out[at:], "\n\n")
		block := out[at : at+end]
		var listed []string
		for line := range strings.Lines(block) {
			listed = append(listed, strings.Fields(line)[0])
		}
		if !slices.Equal(listed, g.commands) {
			t.Errorf("group %q lists %v, want %v", g.title, listed, g.commands)
		}
	}
	for _, s := range []string{"ptk environment", "completion", "--version"} {
		if !strings.Contains(out, s) {
			t.Errorf("help lacks %q", s)
		}
	}
}

// The help's order is commandGroups', whatever order commands were added
// in (a command merged later lands in its place).
func TestGroupOrderWhateverTheAdding(t *testing.T) {
	root := &cobra.Command{Use: "ptk"}
	for _, name := range []string{"zzz", "version", "acp", "traces", "run", "parse", "eval"} {
		root.AddCommand(&cobra.Command{Use: name, Run: func(*cobra.Command, []string) {}})
	}
	groupCommands(root)
	var got []string
	for _, c := range root.Commands() {
		got = append(got, c.Name()+":"+c.GroupID)
	}
	want := []string{"run:core", "acp:core", "eval:core", "traces:data", "parse:tools", "version:tools", "zzz:"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// Every command of the root is in a group, so that a command added later
// does not fall into "Additional Commands" unnoticed.
func TestEveryCommandGrouped(t *testing.T) {
	root := newRoot(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch {
		case c.Name() == "help" || c.Name() == "completion":
		case !c.IsAvailableCommand():
			if c.IsAdditionalHelpTopicCommand() {
				continue
			}
		case c.GroupID == "":
			t.Errorf("command %q is in no group: give it a row in commandGroups (main.go)", c.Name())
		}
	}
}

func TestHelpEnvironment(t *testing.T) {
	for _, args := range [][]string{{"help", "environment"}, {"environment"}} {
		code, out, errOut := runPTK(t, "", args...)
		if code != 0 {
			t.Fatalf("ptk %v: exit %d: %s", args, code, errOut)
		}
		for _, g := range environment {
			for _, v := range g.vars {
				if !strings.Contains(out, "\n  "+v.name+" ") {
					t.Errorf("ptk %v does not list %s", args, v.name)
				}
			}
		}
		for line := range strings.Lines(out) {
			if n := len([]rune(strings.TrimRight(line, "\n"))); n > 80 {
				t.Errorf("line of %d characters: %q", n, line)
			}
		}
	}
}

// fakeBlockedOpenAI is a Chat Completions server that takes a request and
// never answers it: started says a request came.
func fakeBlockedOpenAI(t *testing.T) (url string, started chan struct{}) {
	started = make(chan struct{}, 8)
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so that the server sees the client go away
		started <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) }) // runs first
	return srv.URL + "/v1", started
}

// Ctrl-C (SIGINT) stops a run cleanly and ptk exits 130, as a shell
// reports a program interrupted; SIGTERM gives 143.
func TestInterruptExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := ptkBinary(t)
	for _, tc := range []struct {
		sig  syscall.Signal
		want int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			url, started := fakeBlockedOpenAI(t)
			cmd := exec.Command(bin, "run", "--base-url", url, "--model", "m", "--no-trace", "--json", "What does this repository do?")
			cmd.Dir = t.TempDir()
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-started:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("the model was never asked; stderr: %s", stderr.String())
			}
			start := time.Now()
			cmd.Process.Signal(tc.sig)
			err := waitFor(cmd, 10*time.Second)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.want {
				t.Fatalf("after %v: %v, want exit %d; stderr: %s", tc.sig, err, tc.want, stderr.String())
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %s to stop", d)
			}
			if !strings.Contains(stderr.String(), "ptk: interrupted") {
				t.Errorf("stderr does not say it was interrupted: %s", stderr.String())
			}
			// The run still reports what it did, as one JSON object.
			var res map[string]any
			if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res["success"] != false {
				t.Errorf("stdout is not the failed run's JSON: %v: %s", err, stdout.String())
			}
		})
	}
}

// ptk serve stopped by Ctrl-C exits 130, as every command does; stopped
// by SIGTERM (a service manager, a container runtime) after a clean
// shutdown, it exits 0, so that systemd does not call the unit failed.
func TestServeStopped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := ptkBinary(t)
	for _, tc := range []struct {
		sig  syscall.Signal
		want int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 0}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			addr := freeAddr(t)
			cmd := exec.Command(bin, "serve", "--addr", addr, "--base-url", "http://127.0.0.1:1/v1", "--no-trace")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			up := false
			for i := 0; i < 300 && !up; i++ {
				if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
					resp.Body.Close()
					up = true
				} else {
					time.Sleep(100 * time.Millisecond)
				}
			}
			if !up {
				t.Fatalf("ptk serve did not come up; stderr: %s", stderr.String())
			}
			cmd.Process.Signal(tc.sig)
			err := waitFor(cmd, 10*time.Second)
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.want {
				t.Errorf("after %v: exit %d, want %d; stderr: %s", tc.sig, code, tc.want, stderr.String())
			}
		})
	}
}

// A second Ctrl-C while the first is being handled ends ptk at once: here
// ptk serve, which waits up to 30 s for a request in flight.
func TestSecondInterruptStopsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := ptkBinary(t)
	url, started := fakeBlockedOpenAI(t)
	addr := freeAddr(t)
	cmd := exec.Command(bin, "serve", "--addr", addr, "--base-url", url, "--model", "m", "--mode", "native", "--no-trace")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	// A request that the upstream never answers.
	go func() {
		for i := 0; i < 100; i++ {
			resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			if err == nil {
				resp.Body.Close()
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatalf("the request never reached the upstream; stderr: %s", stderr.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(500 * time.Millisecond) // serve is now waiting for the request
	start := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	err := waitFor(cmd, 10*time.Second)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("after a second SIGINT: %v, want exit 130; stderr: %s", err, stderr.String())
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s after the second SIGINT", d)
	}
	if !strings.Contains(stderr.String(), "again: stopping now") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

func waitFor(cmd *exec.Cmd, limit time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		return errors.New("still running after " + limit.String())
	}
}

// The prompt comes from the arguments, standard input, or both.
func TestPromptFromStdin(t *testing.T) {
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"arguments only", "", []string{"What does this repository do?"}, "What does this repository do?"},
		{"arguments and input", "diff --git a/x b/x\n+new line\n", []string{"Review", "this"}, "Review this\n\ndiff --git a/x b/x\n+new line"},
		{"input only", "  Fix the failing test.\n", nil, "Fix the failing test."},
		{"dash", "Fix the failing test.", []string{"-"}, "Fix the failing test."},
		{"input whitespace only", " \n\t", []string{"Review this"}, "Review this"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, url := newFakeOpenAI(t, fakeReply{content: "ok"})
			args := append([]string{"run", "--base-url", url, "--model", "m", "--no-trace", "--workspace", t.TempDir()}, tc.args...)
			code, out, errOut := runPTK(t, tc.stdin, args...)
			if code != 0 || strings.TrimSpace(out) != "ok" {
				t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
			}
			msgs := f.request(0)["messages"].([]any)
			last := msgs[len(msgs)-1].(map[string]any)
			if last["role"] != "user" || last["content"] != tc.want {
				t.Errorf("the model was asked %q, want %q", last["content"], tc.want)
			}
		})
	}
}

// Input that cannot be a prompt is refused with exit 2 and a line that
// says why, before any model is asked.
func TestPromptFromStdinRefused(t *testing.T) {
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"nothing", "", nil, "run needs a prompt, as arguments or on standard input: ptk run --model qwen3:8b"},
		{"dash and nothing", "", []string{"-"}, "run needs a prompt, and standard input (-) is empty"},
		{"binary", "PK\x03\x04\x00\x00", []string{"what is this"}, "standard input is binary (a NUL byte at offset 4)"},
		{"not UTF-8", "caf\xe9 cr\xe8me", []string{"translate"}, "not UTF-8 text (byte 0xe9 at offset 3)"},
		{"too long", strings.Repeat("a", maxStdin+1), []string{"summarise"}, "standard input is over 8 MiB"},
		{"blank", "", []string{" "}, "run needs a prompt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runPTK(t, tc.stdin, append([]string{"run", "--base-url", "http://127.0.0.1:1/v1", "--no-trace"}, tc.args...)...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q, want 2 and %q", code, errOut, tc.want)
			}
		})
	}
}

// In the built binary standard input is read when it is a pipe or a file,
// and not when it is /dev/null or closed.
func TestPromptFromStdinBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := ptkBinary(t)
	file := filepath.Join(t.TempDir(), "prompt.txt")
	if err := os.WriteFile(file, []byte("from a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		stdin func() *os.File // nil: exec's default, /dev/null
		pipe  string
		args  []string
		want  string // the prompt the model gets; "" for exit 2
	}{
		{"a pipe", nil, "from a pipe", []string{"Review this"}, "Review this\n\nfrom a pipe"},
		{"a file", func() *os.File { f, _ := os.Open(file); return f }, "", []string{"-"}, "from a file"},
		{"/dev/null with a prompt", nil, "", []string{"Hello"}, "Hello"},
		{"/dev/null without one", nil, "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, url := newFakeOpenAI(t, fakeReply{content: "ok"})
			cmd := exec.Command(bin, append([]string{"run", "--base-url", url, "--model", "m", "--no-trace"}, tc.args...)...)
			cmd.Dir = t.TempDir()
			if tc.stdin != nil {
				in := tc.stdin()
				defer in.Close()
				cmd.Stdin = in
			} else if tc.pipe != "" {
				cmd.Stdin = strings.NewReader(tc.pipe) // exec gives the process a pipe
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if tc.want == "" {
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "run needs a prompt") {
					t.Errorf("%v, stderr %s; want exit 2 and run needs a prompt", err, stderr.String())
				}
				return
			}
			if err != nil || strings.TrimSpace(string(out)) != "ok" {
				t.Fatalf("%v: %s %s", err, out, stderr.String())
			}
			msgs := f.request(0)["messages"].([]any)
			if got := msgs[len(msgs)-1].(map[string]any)["content"]; got != tc.want {
				t.Errorf("prompt %q, want %q", got, tc.want)
			}
		})
	}
}

func TestModelsJSON(t *testing.T) {
	code, out, errOut := runPTK(t, "", "models", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var models []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &models); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, out)
	}
	_, table, _ := runPTK(t, "", "models")
	if rows := strings.Count(table, "\n") - 1; len(models) != rows {
		t.Errorf("%d models in JSON, %d rows in the table", len(models), rows)
	}
	wantKeys := []string{"api", "api_key_env", "base_url", "context_window", "cost", "default", "max_output", "model_id", "name", "provider", "streaming", "tools"}
	defaults := 0
	for _, m := range models {
		if keys := slices.Sorted(maps.Keys(m)); !slices.Equal(keys, wantKeys) {
			t.Errorf("keys %v, want %v", keys, wantKeys)
		}
		var cost map[string]float64
		json.Unmarshal(m["cost"], &cost)
		if keys := slices.Sorted(maps.Keys(cost)); !slices.Equal(keys, []string{"cache_read", "cache_write", "input", "output"}) {
			t.Errorf("cost keys %v", keys)
		}
		if string(m["default"]) == "true" {
			defaults++
			if string(m["name"]) != `"qwen3:8b"` {
				t.Errorf("default model %s", m["name"])
			}
		}
		if string(m["name"]) == `"gpt-4o-mini"` && (string(m["api_key_env"]) != `"OPENAI_API_KEY"` || cost["input"] != 0.15 || string(m["tools"]) != `"native"`) {
			t.Errorf("gpt-4o-mini: %v", m)
		}
	}
	if defaults != 1 {
		t.Errorf("%d default models", defaults)
	}
	// The user's catalog is laid over, as for the table.
	_, out, _ = runPTK(t, "", "models", "--json", "--models", writeCatalog(t, "http://localhost:1/v1"))
	if !strings.Contains(out, `"name": "local-a",
    "default": true,
    "provider": "fake",
    "api": "openai",
    "base_url": "http://localhost:1/v1",
    "api_key_env": "FAKE_KEY"`) {
		t.Errorf("the user's catalog is not there:\n%s", out)
	}
}

// complete runs cobra's completion command as a shell does and returns
// the values offered and the directive.
func complete(t *testing.T, args ...string) (values []string, directive string) {
	t.Helper()
	code, out, errOut := runPTK(t, "", append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %v: exit %d: %s", args, code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return lines[:len(lines)-1], lines[len(lines)-1]
}

func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // all of these are offered
		not  []string // none of these
		dir  string
	}{
		{[]string{"run", "--model", ""}, []string{"qwen3:8b", "gpt-4o-mini", "claude-sonnet-4"}, nil, ":4"},
		{[]string{"run", "--model", "gpt-4o,cl"}, []string{"gpt-4o,claude-sonnet-4"}, []string{"gpt-4o,gpt-4o"}, ":4"},
		{[]string{"serve", "--model", "gem"}, []string{"gemini-2.5-flash"}, []string{"qwen3:8b"}, ":4"},
		{[]string{"run", "--mode", ""}, []string{"ptk", "native", "auto"}, []string{"structured"}, ":4"},
		{[]string{"ptool", "call", "--mode", ""}, []string{"auto", "structured", "protocol"}, []string{"native"}, ":4"},
		{[]string{"eval", "--mode", "ptk,"}, []string{"ptk,native", "ptk,auto"}, []string{"ptk,ptk"}, ":4"},
		{[]string{"run", "--tools", "read_file,"}, []string{"read_file,grep", "read_file,bash", "read_file,edit_file"}, []string{"read_file,read_file"}, ":4"},
		{[]string{"mcp", "--tools", "g"}, []string{"glob", "grep"}, []string{"bash"}, ":4"},
		{[]string{"parse", "--tools", ""}, []string{"json"}, nil, ":8"},
		{[]string{"eval", "--categories", "live_s"}, []string{"live_simple"}, []string{"simple_python"}, ":4"},
		{[]string{"eval", "--categories", ""}, []string{"non_live", "all", "irrelevance"}, nil, ":4"},
		{[]string{"eval", "--prompt", "ptk,"}, []string{"ptk,hermes", "ptk,pythonic"}, nil, ":4"},
		{[]string{"traces", "list", "--kind", ""}, []string{"agent", "ptool", "workflow", "react"}, nil, ":4"},
		{[]string{"traces", "list", "--status", ""}, []string{"ok", "error"}, nil, ":4"},
		{[]string{"run", ""}, nil, nil, ":4"},
		{[]string{"r"}, []string{"run\tAsk a model to do something, with tools, and print its answer", "react\tReach GOAL by thinking, calling ptools and tools, and observing, step by step", "refactor\tRewrite a ptool into its distilled form, or a Go function into a ptool"}, nil, ":4"},
	} {
		got, dir := complete(t, tc.args...)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%v: %q not offered in %q", tc.args, w, got)
			}
		}
		for _, n := range tc.not {
			if slices.Contains(got, n) {
				t.Errorf("%v: %q offered", tc.args, n)
			}
		}
		if dir != tc.dir {
			t.Errorf("%v: directive %s, want %s", tc.args, dir, tc.dir)
		}
	}
}

// Conversation names come from the trace store; one whose name would
// break the shell's reading of the list (a line break, an escape
// sequence) is left out. Completing never makes a store.
func TestCompletionConversations(t *testing.T) {
	db := filepath.Join(t.TempDir(), "traces.db")
	if got, _ := complete(t, "conversations", "show", "--trace-db", db, ""); len(got) != 0 {
		t.Errorf("offered %q from no store", got)
	}
	if _, err := os.Stat(db); err == nil {
		t.Fatal("completing made a store")
	}
	s, err := trace.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fix-tests", "release notes", "evil\nrm -rf ~", "bell\x07", "\x1b]0;title\x07"} {
		if err := s.Save(context.Background(), name, nil); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	for _, args := range [][]string{
		{"conversations", "show", "--trace-db", db, ""},
		{"conversations", "rm", "--trace-db", db, ""},
		{"run", "--trace-db", db, "--conversation", ""},
		{"chat", "--trace-db", db, "--conversation", ""},
	} {
		got, dir := complete(t, args...)
		slices.Sort(got)
		if !slices.Equal(got, []string{"fix-tests", "release notes"}) || dir != ":4" {
			t.Errorf("%v: %q %s", args, got, dir)
		}
	}
	if got, _ := complete(t, "conversations", "show", "--trace-db", db, "fix-tests", ""); len(got) != 0 {
		t.Errorf("a second name offered: %q", got)
	}
	// PTK_TRACE_DB names the store as it does for the commands.
	t.Setenv("PTK_TRACE_DB", db)
	if got, _ := complete(t, "conversations", "show", "f"); !slices.Equal(got, []string{"fix-tests"}) {
		t.Errorf("with PTK_TRACE_DB: %q", got)
	}
}

func TestCompletionPtools(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ptools.json")
	os.WriteFile(file, []byte(`{"ptools": [
		{"name": "classify_sentiment", "doc": "d", "input": {"type": "object"}, "output": {"type": "string"}},
		{"name": "extract_items", "doc": "d", "input": {"type": "object"}, "output": {"type": "string"}}]}`), 0o644)
	for _, args := range [][]string{{"ptool", "call", "--ptools", file, ""}, {"distill", "--ptools", file, ""}} {
		got, _ := complete(t, args...)
		if !slices.Equal(got, []string{"classify_sentiment", "extract_items"}) {
			t.Errorf("%v: %q", args, got)
		}
	}
}

// Every completion script cobra writes for ptk is there.
func TestCompletionScripts(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, errOut := runPTK(t, "", "completion", sh)
		if code != 0 || !strings.Contains(out, "__complete") {
			t.Errorf("completion %s: exit %d, %d bytes, %s", sh, code, len(out), errOut)
		}
	}
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
