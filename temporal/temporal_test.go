package temporal

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/tool"
)

var update = flag.Bool("update", false, "rewrite testdata/agent_history.json")

var queues struct {
	sync.Mutex
	n int
}

// queue returns a task queue of the test's own.
func queue(t *testing.T) string {
	queues.Lock()
	defer queues.Unlock()
	queues.n++
	return fmt.Sprintf("%s-%d-%d", strings.ReplaceAll(t.Name(), "/", "-"), os.Getpid(), queues.n)
}

// ledgerDSN is the ledger the test's workers share: a fresh schema on
// the PostgreSQL of $PTK_TEST_POSTGRES when it answers, else a SQLite file
// in dir.
func ledgerDSN(t *testing.T, dir string) string {
	if u := pgSchema(t); u != "" {
		return u
	}
	return filepath.Join(dir, "ledger.db")
}

// pgSchema returns the URL of a fresh schema on the PostgreSQL server of
// $PTK_TEST_POSTGRES, dropped when the test ends, or "" without one (a
// failure under CI).
func pgSchema(t *testing.T) string {
	u := os.Getenv("PTK_TEST_POSTGRES")
	if u == "" {
		return ""
	}
	db, err := sql.Open("pgx", u)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = db.PingContext(ctx)
		cancel()
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL at $PTK_TEST_POSTGRES: %v", err)
		}
		return ""
	}
	schema := fmt.Sprintf("ledger_%d_%d", os.Getpid(), time.Now().UnixNano())
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Exec("DROP SCHEMA " + schema + " CASCADE")
		db.Close()
	})
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + "search_path=" + schema
}

// TestLedgerOpenedAtOnce: workers that start at once on a new database
// all open the ledger (its table is made once, under a lock).
func TestLedgerOpenedAtOnce(t *testing.T) {
	dsn := pgSchema(t)
	if dsn == "" {
		t.Skip("no PostgreSQL at $PTK_TEST_POSTGRES")
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			l, err := OpenLedger(context.Background(), dsn)
			if err == nil {
				_, err = l.Begin(context.Background(), "k", "write_note", "w")
				l.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// process is a worker in a process of its own.
type process struct {
	cmd *exec.Cmd
}

func startProcess(t *testing.T, queue, dir, ledger string) *process {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PTK_TEMPORAL_WORKER="+server.addr, "PTK_TEMPORAL_QUEUE="+queue,
		"PTK_TEMPORAL_DIR="+dir, "PTK_TEMPORAL_LEDGER="+ledger)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd}
	t.Cleanup(p.kill)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("the worker did not start: %q %v", line, err)
	}
	return p
}

func (p *process) kill() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Signal(syscall.SIGKILL)
		p.cmd.Wait()
	}
}

// waitFor waits until f says yes, or fails the test after d.
func waitFor(t *testing.T, d time.Duration, what string, f func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !f() {
		if time.Now().After(end) {
			t.Fatalf("%s: not after %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func marks(dir, prefix string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, prefix+".*"))
	return m
}

func effects(t *testing.T, dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, "effects.log"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "_"))
}

func runAgent(t *testing.T, c client.Client, queue string, in AgentInput) client.WorkflowRun {
	t.Helper()
	if in.Mode == "" {
		in.Mode = agent.ModeNative
	}
	run, err := StartAgent(context.Background(), c, in, StartOptions{TaskQueue: queue})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func result(t *testing.T, run client.WorkflowRun, d time.Duration) *AgentOutput {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out AgentOutput
	if err := run.Get(ctx, &out); err != nil {
		t.Fatalf("run %s: %v", run.GetID(), err)
	}
	return &out
}

// TestKillWorkerMidToolCall: kill -9 of the worker in the middle of a tool
// call; a second worker finishes the run with the same answer, and no tool
// that changes something runs twice.
func TestKillWorkerMidToolCall(t *testing.T) {
	c := dial(t)
	t.Run("read", func(t *testing.T) {
		// a change, then a long read-only call that the first worker dies
		// in: the read runs again on the second worker, the change does not
		dir := t.TempDir()
		q, ledger := queue(t), ledgerDSN(t, dir)
		a := startProcess(t, q, dir, ledger)
		run := runAgent(t, c, q, AgentInput{Messages: agent.Prompt("kill-read"), Preset: tool.PresetYolo})
		waitFor(t, 30*time.Second, "the first worker in slow_read", func() bool { return len(marks(dir, "slow_read")) == 1 })
		a.kill()
		os.WriteFile(filepath.Join(dir, "release"), nil, 0o644)
		startProcess(t, q, dir, ledger)
		out := result(t, run, 60*time.Second)
		if !out.Success || out.Content != "the answer is contents: 42" {
			t.Fatalf("success %v, answer %q, error %+v", out.Success, out.Content, out.Error)
		}
		if got := effects(t, dir); len(got) != 1 || got[0] != "write_note_first" {
			t.Errorf("effects %q, want the one write", got)
		}
		if m := marks(dir, "slow_read"); len(m) != 2 {
			t.Errorf("slow_read ran in %d processes, want 2 (the dead worker's and the next): %q", len(m), m)
		}
		if out.Duration < 100*time.Millisecond || len(out.ToolCalls) != 2 {
			t.Errorf("duration %v, %d tool calls", out.Duration, len(out.ToolCalls))
		}
	})
	t.Run("write", func(t *testing.T) {
		// a long call that changes something, which the worker dies in:
		// the next worker does not run it again, the model is told
		dir := t.TempDir()
		q, ledger := queue(t), ledgerDSN(t, dir)
		a := startProcess(t, q, dir, ledger)
		run := runAgent(t, c, q, AgentInput{Messages: agent.Prompt("kill-write"), Preset: tool.PresetYolo})
		waitFor(t, 30*time.Second, "the first worker in slow_write", func() bool { return len(marks(dir, "slow_write")) == 1 })
		a.kill()
		os.WriteFile(filepath.Join(dir, "release"), nil, 0o644)
		startProcess(t, q, dir, ledger)
		out := result(t, run, 60*time.Second)
		if !out.Success || !strings.Contains(out.Content, "Not run again: this call started at") {
			t.Fatalf("success %v, answer %q, error %+v", out.Success, out.Content, out.Error)
		}
		if got := effects(t, dir); len(got) != 1 || got[0] != "slow_write_once" {
			t.Errorf("effects %q, want the one write", got)
		}
		if m := marks(dir, "slow_write"); len(m) != 1 {
			t.Errorf("slow_write ran in %d processes: %q", len(m), m)
		}
		if len(out.ToolCalls) != 1 || !out.ToolCalls[0].Result.IsError {
			t.Errorf("tool calls %+v", out.ToolCalls)
		}
	})
}

// TestManyRunsOverThreeWorkers: 100 runs at once over three workers all
// complete, each with its own answer.
func TestManyRunsOverThreeWorkers(t *testing.T) {
	c := dial(t)
	dir := t.TempDir()
	q := queue(t)
	var counts [3]int
	var mu sync.Mutex
	for i := range 3 {
		w := testWorker(t, dir, "")
		// the default heartbeat: 100 runs at once on a loaded machine may
		// keep a call from its first beat for more than the 1 s of the
		// tests that kill workers
		w.Heartbeat = 0
		// count the model calls each worker makes
		inner := w.Model
		w.Model = func(name string) (llm.Model, error) {
			mu.Lock()
			counts[i]++
			mu.Unlock()
			return inner(name)
		}
		startWorker(t, c, q, w)
	}
	const n = 100
	runs := make([]client.WorkflowRun, n)
	for i := range n {
		runs[i] = runAgent(t, c, q, AgentInput{Messages: agent.Prompt(fmt.Sprintf("echo n%d", i))})
	}
	for i, run := range runs {
		out := result(t, run, 3*time.Minute)
		if want := fmt.Sprintf("echo n%d", i); !out.Success || out.Content != want {
			t.Fatalf("run %d: %q, want %q (error %+v)", i, out.Content, want, out.Error)
		}
	}
	t.Logf("model calls per worker: %v", counts)
}

// TestApprovalSignal: a run waits for approval of a call that changes
// something (the preset asks), shows it in its progress, and goes on when
// the signal comes: allowed, the call runs; denied, the model is told why.
func TestApprovalSignal(t *testing.T) {
	c := dial(t)
	dir := t.TempDir()
	q := queue(t)
	startWorker(t, c, q, testWorker(t, dir, ""))
	ctx := context.Background()
	for _, allow := range []bool{true, false} {
		run := runAgent(t, c, q, AgentInput{Messages: agent.Prompt(fmt.Sprintf("approve %v", allow)), Preset: tool.PresetAsk})
		var p *Progress
		waitFor(t, 30*time.Second, "the run waiting", func() bool {
			var err error
			p, err = Status(ctx, c, run.GetID(), 0)
			return err == nil && p.State == StateWaiting
		})
		if len(p.Waiting) != 1 || p.Waiting[0].Tool != "write_note" {
			t.Fatalf("waiting %+v", p.Waiting)
		}
		if len(effects(t, dir)) != (map[bool]int{true: 0, false: 1})[allow] {
			t.Fatalf("the call ran before it was approved: %q", effects(t, dir))
		}
		if err := Approve(ctx, c, run.GetID(), Decision{CallID: "other", Allow: true}); err != nil {
			t.Fatal(err)
		}
		if err := Approve(ctx, c, run.GetID(), Decision{CallID: p.Waiting[0].CallID, Allow: allow, Reason: "not today"}); err != nil {
			t.Fatal(err)
		}
		out := result(t, run, 30*time.Second)
		if allow && out.Content != "note: noted true" {
			t.Errorf("allowed: %q", out.Content)
		}
		if !allow && !strings.HasSuffix(out.Content, "Denied: not today") {
			t.Errorf("denied: %q", out.Content)
		}
	}
	if got := effects(t, dir); len(got) != 1 {
		t.Errorf("effects %q, want the one approved", got)
	}
}

// TestCancelStops: a cancel request stops a run in the middle of a tool
// call: the call's context is canceled, the run ends canceled, and its
// record says so.
func TestCancelStops(t *testing.T) {
	c := dial(t)
	dir := t.TempDir()
	q := queue(t)
	startWorker(t, c, q, testWorker(t, dir, ""))
	run := runAgent(t, c, q, AgentInput{Messages: agent.Prompt("cancel")})
	waitFor(t, 30*time.Second, "the run in slow_read", func() bool { return len(marks(dir, "slow_read")) == 1 })
	ctx := context.Background()
	if err := Cancel(ctx, c, run.GetID()); err != nil {
		t.Fatal(err)
	}
	gctx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	err := run.Get(gctx, nil)
	var ce *temporal.CanceledError
	if !errors.As(err, &ce) {
		t.Fatalf("the run ended with %v, want canceled", err)
	}
	var out AgentOutput
	if err := ce.Details(&out); err != nil || out.Error == nil || out.Error.Code != ptk.Canceled {
		t.Errorf("output %+v, %v", out, err)
	}
	d, err := c.DescribeWorkflowExecution(ctx, run.GetID(), "")
	if err != nil || d.WorkflowExecutionInfo.Status != enums.WORKFLOW_EXECUTION_STATUS_CANCELED {
		t.Errorf("status %v, %v", d.GetWorkflowExecutionInfo().GetStatus(), err)
	}
	p, err := Status(ctx, c, run.GetID(), 0)
	if err != nil || p.State != StateCanceled {
		t.Errorf("progress %+v, %v", p, err)
	}
}

// history returns a finished run's history.
func history(t *testing.T, c client.Client, id string) *historypb.History {
	t.Helper()
	h := &historypb.History{}
	it := c.GetWorkflowHistory(context.Background(), id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, e)
	}
	return h
}

// TestReplayIsDeterministic: the history of a run with a model call, a
// tool call and an approval replays on the workflow's code with the SDK's
// determinism check; so does the recorded history in testdata (a change
// that breaks runs already going fails here); and a workflow that does
// something else is caught.
func TestReplayIsDeterministic(t *testing.T) {
	c := dial(t)
	dir := t.TempDir()
	q := queue(t)
	w := testWorker(t, dir, "")
	startWorker(t, c, q, w)
	ctx := context.Background()
	run := runAgent(t, c, q, AgentInput{Messages: agent.Prompt("approve yes"), Preset: tool.PresetAsk, Timeout: time.Hour})
	var p *Progress
	waitFor(t, 30*time.Second, "the run waiting", func() bool {
		var err error
		p, err = Status(ctx, c, run.GetID(), 0)
		return err == nil && p.State == StateWaiting
	})
	if err := Approve(ctx, c, run.GetID(), Decision{CallID: p.Waiting[0].CallID, Allow: true}); err != nil {
		t.Fatal(err)
	}
	if out := result(t, run, 30*time.Second); out.Content != "note: noted yes" {
		t.Fatalf("answer %q", out.Content)
	}
	h := history(t, c, run.GetID())

	replayer := worker.NewWorkflowReplayer()
	w.RegisterWorkflows(replayer)
	if err := replayer.ReplayWorkflowHistory(quiet(), h); err != nil {
		t.Fatalf("the run's history does not replay: %v", err)
	}
	file := filepath.Join("testdata", "agent_history.json")
	if *update {
		b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := replayer.ReplayWorkflowHistoryFromJSONFile(quiet(), file); err != nil {
		t.Errorf("the recorded history %s does not replay: %v", file, err)
	}

	// A workflow that calls its tool before its model is not this run.
	other := worker.NewWorkflowReplayer()
	other.RegisterWorkflowWithOptions(func(ctx workflow.Context, in AgentInput) (*AgentOutput, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
		workflow.ExecuteActivity(ctx, ToolActivity, ToolInput{}).Get(ctx, nil)
		return &AgentOutput{}, nil
	}, workflow.RegisterOptions{Name: AgentWorkflow})
	if err := other.ReplayWorkflowHistory(quiet(), h); err == nil {
		t.Errorf("a different workflow replayed the run's history")
	}
}
