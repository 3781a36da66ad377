package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/temporal/internal/devtest"
	"github.com/ptkit/ptk/tool"
)

// The tests run against a real Temporal server, started once for the
// package (internal/devtest).
var server struct {
	addr      string
	namespace string
	err       error
}

func TestMain(m *testing.M) {
	if addr := os.Getenv("PTK_TEMPORAL_WORKER"); addr != "" {
		os.Exit(workerProcess(addr))
	}
	stop := startServer()
	code := m.Run()
	stop()
	os.Exit(code)
}

func startServer() (stop func()) {
	addr, stop, err := devtest.Start("devserver")
	if err != nil {
		server.err = err
		return func() {}
	}
	server.addr, server.namespace = addr, "default"
	return stop
}

// dial returns a client of the test server; a test without one fails in
// CI and is skipped elsewhere.
func dial(t *testing.T) client.Client {
	t.Helper()
	if server.err != nil {
		if os.Getenv("CI") != "" || os.Getenv("PTK_TEMPORAL_REQUIRED") != "" {
			t.Fatalf("no Temporal server: %v", server.err)
		}
		t.Skipf("no Temporal server: %v", server.err)
	}
	c, err := client.Dial(client.Options{HostPort: server.addr, Namespace: server.namespace, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func quiet() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// scripted is the tests' model: what it answers depends only on the
// conversation it is given (so that any worker, any retry, answers the
// same), by the scenario named in the first user message.
type scripted struct{}

func (scripted) Generate(_ context.Context, req llm.Request) (*llm.Response, error) {
	var prompt string
	var results []ptk.Message
	for _, m := range req.Messages {
		switch m.Role {
		case ptk.RoleUser:
			if prompt == "" {
				prompt = m.Content
			}
		case ptk.RoleTool:
			results = append(results, m)
		}
	}
	call := func(tool, args string) (*llm.Response, error) {
		return &llm.Response{Calls: []ptk.Call{{Tool: tool, Args: json.RawMessage(args)}}, Usage: ptk.Usage{PromptTokens: 10, CompletionTokens: 5}}, nil
	}
	answer := func(s string) (*llm.Response, error) {
		return &llm.Response{Content: s, Usage: ptk.Usage{PromptTokens: 10, CompletionTokens: 5}}, nil
	}
	last := func() string { return results[len(results)-1].Content }
	scenario, arg, _ := strings.Cut(prompt, " ")
	switch scenario {
	case "kill-read": // a change, then a long read the worker dies in
		switch len(results) {
		case 0:
			return call("write_note", `{"text": "first"}`)
		case 1:
			return call("slow_read", `{}`)
		}
		return answer("the answer is " + last())
	case "kill-write": // a long change the worker dies in
		if len(results) == 0 {
			return call("slow_write", `{"text": "once"}`)
		}
		return answer("after the write: " + last())
	case "approve": // a change that needs approval
		if len(results) == 0 {
			return call("write_note", `{"text": "`+arg+`"}`)
		}
		return answer("note: " + last())
	case "cancel": // a long read, canceled
		if len(results) == 0 {
			return call("slow_read", `{}`)
		}
		return answer("not canceled: " + last())
	case "echo":
		if len(results) == 0 {
			return call("echo", `{"text": "`+arg+`"}`)
		}
		return answer("echo " + last())
	}
	return answer("hello")
}

type note struct {
	Text string `json:"text"`
}

// testTools are the tests' tools over dir: write_note and slow_write
// change something (a line in effects.log), slow_read and echo do not.
// The slow ones leave a mark named after the process, then wait for the
// file "release" (or their context).
func testTools(dir string) []ptk.Tool {
	effect := func(line string) error {
		f, err := os.OpenFile(filepath.Join(dir, "effects.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = fmt.Fprintln(f, line)
		return err
	}
	wait := func(ctx context.Context, mark string) error {
		os.WriteFile(filepath.Join(dir, mark+"."+fmt.Sprint(os.Getpid())), nil, 0o644)
		for {
			if _, err := os.Stat(filepath.Join(dir, "release")); err == nil {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	write := tool.New("write_note", "Write a note.", func(_ context.Context, n note) (string, error) {
		return "noted " + n.Text, effect("write_note " + n.Text)
	})
	slowWrite := tool.New("slow_write", "Write slowly.", func(ctx context.Context, n note) (string, error) {
		if err := effect("slow_write " + n.Text); err != nil {
			return "", err
		}
		return "written", wait(ctx, "slow_write")
	})
	slowRead := tool.New("slow_read", "Read slowly.", func(ctx context.Context, _ struct{}) (string, error) {
		return "contents: 42", wait(ctx, "slow_read")
	}, tool.ReadOnly())
	echo := tool.New("echo", "Echo.", func(_ context.Context, n note) (string, error) { return n.Text, nil }, tool.ReadOnly())
	return []ptk.Tool{write, slowWrite, slowRead, echo}
}

// testWorker is the Worker of the tests over dir, with the ledger at dsn
// (none when empty).
func testWorker(t testing.TB, dir, ledger string) *Worker {
	w := &Worker{
		Model:     func(string) (llm.Model, error) { return scripted{}, nil },
		Tools:     testTools(dir),
		Heartbeat: time.Second,
	}
	if ledger != "" {
		l, err := OpenLedger(context.Background(), ledger)
		if err != nil {
			if t != nil {
				t.Fatal(err)
			}
			panic(err)
		}
		w.Ledger = l
		if t != nil {
			t.Cleanup(func() { l.Close() })
		}
	}
	return w
}

// startWorker runs a worker of w in this process on queue until the test
// ends.
func startWorker(t *testing.T, c client.Client, queue string, w *Worker) {
	t.Helper()
	wk := worker.New(c, queue, worker.Options{StickyScheduleToStartTimeout: time.Second})
	w.Register(wk)
	if err := wk.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wk.Stop)
}

// workerProcess is the test binary as a worker of its own process, for
// the tests that kill one: PTK_TEMPORAL_WORKER is the server's address,
// PTK_TEMPORAL_QUEUE the task queue, PTK_TEMPORAL_DIR the tools' folder and
// PTK_TEMPORAL_LEDGER the ledger.
func workerProcess(addr string) int {
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: "default", Logger: quiet()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	w := testWorker(nil, os.Getenv("PTK_TEMPORAL_DIR"), os.Getenv("PTK_TEMPORAL_LEDGER"))
	wk := worker.New(c, os.Getenv("PTK_TEMPORAL_QUEUE"), worker.Options{StickyScheduleToStartTimeout: time.Second})
	w.Register(wk)
	if err := wk.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
	wk.Stop()
	return 0
}
