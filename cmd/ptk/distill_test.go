package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/distill"
	"github.com/ptkit/ptk/trace"
)

const ticketPtools = `{"ptools": [{"name": "route_ticket", "doc": "Route a support ticket to a queue and say whether it is urgent.",
  "input": {"type": "object", "properties": {"subject": {"type": "string"}, "priority": {"type": "integer"}}, "required": ["subject", "priority"]},
  "output": {"type": "object", "properties": {"queue": {"type": "string", "enum": ["billing", "tech", "other"]}, "urgent": {"type": "boolean"}},
    "required": ["queue", "urgent"]}}]}`

const ticketCode = `package distilled

import (
	"context"
	"strings"

	"github.com/ptkit/ptk/ptool"
)

// Distilled routes the tickets whose subject names invoices or errors.
func Distilled(ctx context.Context, in In) (Out, error) {
	s := strings.ToLower(in.Subject)
	urgent := in.Priority >= 3
	switch {
	case strings.Contains(s, "invoice"), strings.Contains(s, "refund"):
		return Out{Queue: "billing", Urgent: urgent}, nil
	case strings.Contains(s, "error"):
		return Out{Queue: "tech", Urgent: urgent}, nil
	}
	return Out{}, ptool.ErrFallback
}
`

// ticketTest tries a training example of each pattern of ticketPatterns.
func ticketTest(examples map[string][2]string) string {
	var rows strings.Builder
	for _, k := range []string{"invoice", "error", "refund", "other"} {
		in, out := examples[k][0], examples[k][1]
		if k == "other" {
			out = ""
		}
		fmt.Fprintf(&rows, "\t\t{%q, %q},\n", in, out)
	}
	return `package distilled

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/ptkit/ptk/ptool"
)

func TestDistilled(t *testing.T) {
	for _, c := range []struct{ in, want string }{
` + rows.String() + `	} {
		var in In
		if err := json.Unmarshal([]byte(c.in), &in); err != nil {
			t.Fatal(err)
		}
		got, err := Distilled(context.Background(), in)
		if c.want == "" {
			if !errors.Is(err, ptool.ErrFallback) {
				t.Errorf("%s: %+v, %v; want a fallback", c.in, got, err)
			}
			continue
		}
		var want Out
		json.Unmarshal([]byte(c.want), &want)
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", c.in, got, err, want)
		}
	}
}
`
}

// ticketPatterns is the model's patterns of the training examples ptk
// distill shows (the calls of db split as it splits them), and an example
// of each.
func ticketPatterns(t *testing.T, db string) (any, map[string][2]string) {
	s, err := trace.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	calls, err := s.Examples(context.Background(), "route_ticket", -1)
	if err != nil {
		t.Fatal(err)
	}
	train := distill.Split(calls, 0.2, 0.3, 1).Train
	nums := map[string][]int{}
	first := map[string][2]string{}
	for i, e := range train {
		k := "other"
		for _, w := range []string{"invoice", "error", "refund"} {
			if strings.Contains(strings.ToLower(string(e.Input)), w) {
				k = w
			}
		}
		nums[k] = append(nums[k], i+1)
		if _, ok := first[k]; !ok {
			first[k] = [2]string{string(e.Input), string(e.Output)}
		}
	}
	return map[string]any{"patterns": []map[string]any{
		{"rule": "subjects naming an invoice go to billing, urgent from priority 3", "examples": nums["invoice"]},
		{"rule": "subjects naming an error go to tech, urgent from priority 3", "examples": nums["error"]},
		{"rule": "subjects asking a refund go to billing, urgent from priority 3", "examples": nums["refund"]},
		{"rule": "other questions: the model judges", "examples": nums["other"]},
	}}, first
}

// ticket is the i-th stored call: invoices and refunds go to billing, errors to tech,
// the rest where the model judged (no rule code can see).
func ticket(i int) (in, out string) {
	subject, queue := fmt.Sprintf("question number %d", i), []string{"other", "tech"}[i%2]
	switch i % 4 {
	case 0:
		subject, queue = fmt.Sprintf("Invoice %d is wrong", i), "billing"
	case 1:
		subject, queue = fmt.Sprintf("Error %d on login", i), "tech"
	case 2:
		subject, queue = fmt.Sprintf("Refund %d please", i), "billing"
	}
	p := i % 5
	return fmt.Sprintf(`{"subject":%q,"priority":%d}`, subject, p), fmt.Sprintf(`{"urgent":%v,"queue":%q}`, p >= 3, queue)
}

// ticketStore makes a trace store holding 60 calls of route_ticket, and
// the ptools file declaring it.
func ticketStore(t *testing.T) (dir, db, ptools string) {
	dir = t.TempDir()
	db = filepath.Join(dir, "traces.db")
	ctx := context.Background()
	s, err := trace.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		in, out := ticket(i)
		rec := &trace.Record{Run: trace.Run{ID: trace.NewID(), Kind: trace.KindPtool, Name: "route_ticket",
			StartedAt: time.Now().Add(time.Duration(i-60) * time.Minute)},
			PtoolCalls: []trace.PtoolCall{{Ptool: "route_ticket", Input: json.RawMessage(in), Output: json.RawMessage(out), Source: "model"}}}
		if err := s.Write(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	ptools = filepath.Join(dir, "ptools.json")
	os.WriteFile(ptools, []byte(ticketPtools), 0o644)
	return dir, db, ptools
}

// answer is an unknown model's answer on an OpenAI-compatible API, which
// is asked for structured output: {"answer": ...}.
func answer(v any) fakeReply {
	b, _ := json.Marshal(map[string]any{"answer": v})
	return fakeReply{content: string(b)}
}

// blockAt serves h, holding its nth request until release is called;
// asked is closed when that request came.
func blockAt(t *testing.T, h http.Handler, nth int32) (url string, asked chan struct{}, release func()) {
	asked, held := make(chan struct{}), make(chan struct{})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == nth {
			close(asked)
			<-held
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	var once sync.Once
	release = func() { once.Do(func() { close(held) }) }
	t.Cleanup(release) // runs first
	return srv.URL + "/v1", asked, release
}

// screenedCode is a candidate the screen rejects: it has an init function.
const screenedCode = ticketCode + "\nfunc init() {}\n"

// waitRun waits until the distill run in db is as want says, reading it
// as it is while ptk distill goes on; it returns the run.
func waitRun(t *testing.T, db string, want func(*trace.Record) bool) *trace.Record {
	t.Helper()
	ctx := context.Background()
	var rec *trace.Record
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		s, err := trace.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		runs, _ := s.List(ctx, trace.Filter{Kind: trace.KindDistill})
		if len(runs) == 1 {
			rec, _ = s.Get(ctx, runs[0].ID)
		}
		s.Close()
		if rec != nil && want(rec) {
			return rec
		}
	}
	b, _ := json.Marshal(rec)
	t.Fatalf("the distill run in the store: %s", b)
	return nil
}

// stepNames is a run's steps as "name:status:parent".
func stepNames(rec *trace.Record) string {
	var names []string
	for _, st := range rec.Steps {
		names = append(names, st.Name+":"+st.Status+":"+st.Parent)
	}
	return strings.Join(names, " ")
}

// TestDistillEndToEnd: 60 stored calls of a declarative ptool, ptk
// distill with a scripted model, and the Go file it writes wired into a
// program that answers most inputs without a model call. The run is seen
// in the trace store as it goes: while the model is asked for the second
// candidate (held until the test has looked), the run is running, with the
// first round rejected by its screen and the second going on, and no
// held-out input anywhere in the store.
func TestDistillEndToEnd(t *testing.T) {
	dir, db, ptools := ticketStore(t)
	ctx := context.Background()
	needBwrap(t)
	pats, examples := ticketPatterns(t, db)
	fake, _ := newFakeOpenAI(t, answer(pats), answer(distill.Candidate{Code: screenedCode, Test: ticketTest(examples)}),
		answer(distill.Candidate{Code: ticketCode, Test: ticketTest(examples)}))
	url, asked, release := blockAt(t, fake, 3)
	prog := filepath.Join(dir, "prog")
	os.Mkdir(prog, 0o755)
	root, _ := filepath.Abs("../..")
	report := filepath.Join(dir, "report.json")
	var code int
	var out, errOut string
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		code, out, errOut = runPTK(t, "", "distill", "route_ticket", "--ptools", ptools, "--trace-db", db, "--base-url", url,
			"--api-key", "k", "--model", "m", "--out", filepath.Join(prog, "route.go"), "--package", "main",
			"--report", report, "--case-timeout", "1s")
	}()
	select {
	case <-asked:
	case <-finished:
		t.Fatalf("ptk distill ended before asking for a second candidate: exit %d\n%s\n%s", code, out, errOut)
	case <-time.After(3 * time.Minute):
		t.Fatal("the second candidate was never asked for")
	}
	// (Get reads a run's row, calls and steps one after the other: the
	// wait is for all of them)
	live := waitRun(t, db, func(r *trace.Record) bool {
		return stepNames(r) == "round 1:failed: screen:failed:step/0 round 2::" && r.Status == trace.StatusRunning && len(r.ModelCalls) == 2 && r.Usage.PromptTokens == 240
	})
	if live.Provider != "" || live.Name != "route_ticket" || live.ModelCalls[0].Mode != "patterns" || live.ModelCalls[1].Parent != "step/0" ||
		live.Steps[2].Note != "running" || live.Steps[0].Note != "rejected: the check before compiling rejected it" {
		b, _ := json.Marshal(live)
		t.Errorf("the running distill run: %s", b)
	}
	release()
	<-finished
	if code != 0 {
		if n := len(fake.requests); n > 0 {
			t.Log(fake.requests[n-1]["messages"])
		}
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	t.Log(out)
	var rep distill.Report
	data, _ := os.ReadFile(report)
	if err := json.Unmarshal(data, &rep); err != nil || !rep.Accepted || rep.Train+rep.Validation+rep.Sealed != 60 || !rep.Confined {
		t.Fatalf("report: %v %+v", err, rep)
	}
	if !strings.Contains(out, "accepted after 2 round") || !strings.Contains(out, "wrote ") {
		t.Errorf("summary:\n%s", out)
	}
	// the report is in the trace store, as a span tree: the round, its
	// checks under it, the model calls that wrote it under it; the
	// held-out inputs nowhere in it
	s, _ := trace.Open(ctx, db)
	runs, err := s.List(ctx, trace.Filter{Kind: "distill"})
	if err != nil || len(runs) != 1 || runs[0].Name != "route_ticket" {
		t.Fatalf("distill runs in the store: %v %+v", err, runs)
	}
	rec, err := s.Get(ctx, runs[0].ID)
	calls, _ := s.Examples(ctx, "route_ticket", -1)
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range rec.Steps {
		if st.Duration <= 0 || st.Start.IsZero() {
			t.Errorf("step %s has no time: %+v", st.Name, st)
		}
	}
	if got := stepNames(rec); got != "round 1:failed: screen:failed:step/0 round 2:ok: screen:ok:step/2 compile:ok:step/2 tests:ok:step/2 validation:ok:step/2 sealed:ok:step/2" {
		t.Errorf("steps: %s", got)
	}
	if n := len(rec.Steps); n > 0 && !strings.HasSuffix(rec.Steps[n-1].Note, "held-out calls equal, 0 wrong, "+fmt.Sprint(rep.Rounds[1].Sealed.Abstained)+" left to the model") {
		t.Errorf("the sealed check's note: %q", rec.Steps[n-1].Note)
	}
	if rec.ID != live.ID || rec.Status != trace.StatusOK || len(rec.ModelCalls) != 3 || rec.ModelCalls[0].Mode != "patterns" || rec.ModelCalls[1].Parent != "step/0" ||
		rec.ModelCalls[2].Parent != "step/2" || rec.ModelCalls[2].Usage.PromptTokens != 120 || rec.Usage.PromptTokens != 360 {
		t.Errorf("run %s (%s), model calls: %+v, usage %+v", rec.ID, rec.Status, rec.ModelCalls, rec.Usage)
	}
	sealed := distill.Split(calls, 0.2, 0.3, 1).Sealed
	for what, r := range map[string]*trace.Record{"the record": rec, "the running run": live} {
		b, _ := json.Marshal(r)
		for _, e := range sealed {
			if strings.Contains(string(b), string(e.Input)) {
				t.Errorf("%s holds a sealed input: %s", what, e.Input)
			}
		}
	}

	// wired into a program: most inputs answered without a model call
	os.WriteFile(filepath.Join(prog, "go.mod"), []byte("module prog\n\ngo 1.26.0\n\nrequire github.com/ptkit/ptk v0.0.0-00010101000000-000000000000\n\nreplace github.com/ptkit/ptk => "+root+"\n"), 0o644)
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	os.WriteFile(filepath.Join(prog, "go.sum"), sum, 0o644)
	os.WriteFile(filepath.Join(prog, "main.go"), []byte(`package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/ptool"
)

type noModel struct{}

func (noModel) Generate(context.Context, llm.Request) (*llm.Response, error) { return nil, errors.New("no model") }

func main() {
	d := New(ptool.WithModel(noModel{}))
	for i := range 40 {
		subject := []string{"Invoice %d overdue", "Error %d in app", "Invoice %d missing", "Hello %d"}[i%4]
		d.Call(context.Background(), In{Subject: fmt.Sprintf(subject, i), Priority: int64(i % 5)})
	}
	s := d.Stats()
	fmt.Println(s.Calls, s.Code, s.FellBack)
}
`), 0o644)
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = prog
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the program: %v\n%s", err, got)
	}
	if strings.TrimSpace(string(got)) != "40 30 10" {
		t.Errorf("calls, code, fell back = %s; want 40 30 10", got)
	}
}

// TestDistillKilled: ptk distill killed (SIGKILL) while it waits for the
// model leaves its run running in the store, with what it had done; the
// next ptk that opens the store marks it interrupted.
func TestDistillKilled(t *testing.T) {
	_, db, ptools := ticketStore(t)
	needBwrap(t)
	pats, _ := ticketPatterns(t, db)
	// (the second answer goes to nobody: it is held until ptk is gone)
	fake, _ := newFakeOpenAI(t, answer(pats), answer(distill.Candidate{Code: ticketCode}))
	url, asked, _ := blockAt(t, fake, 2)
	cmd := exec.Command(os.Args[0], "distill", "route_ticket", "--ptools", ptools, "--trace-db", db, "--base-url", url,
		"--api-key", "k", "--model", "m", "--out", filepath.Join(t.TempDir(), "route.go"))
	cmd.Env = append(os.Environ(), ptkEnv+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	select {
	case <-asked:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the first candidate was never asked for; stderr: %s", stderr.String())
	}
	waitRun(t, db, func(r *trace.Record) bool {
		return r.Status == trace.StatusRunning && stepNames(r) == "round 1::" && len(r.ModelCalls) == 1
	})
	cmd.Process.Kill()
	cmd.Wait()
	rec := waitRun(t, db, func(r *trace.Record) bool { return r.Status != trace.StatusRunning })
	if rec.Status != trace.StatusInterrupted || !strings.Contains(rec.ErrorMessage, "ended before the run did") ||
		stepNames(rec) != "round 1::" || len(rec.ModelCalls) != 1 || rec.ModelCalls[0].Mode != "patterns" {
		b, _ := json.Marshal(rec)
		t.Errorf("the killed distill run: %s", b)
	}
}

// TestPtoolCallRecorded: ptk ptool call stores its call, where ptk distill
// finds it; --no-trace stores nothing.
func TestPtoolCallRecorded(t *testing.T) {
	db := filepath.Join(t.TempDir(), "traces.db")
	_, url := newFakeOpenAI(t, fakeReply{content: `{"answer": "Positive"}`}, fakeReply{content: `{"answer": "negative"}`})
	code, _, errOut := runPTK(t, "", "ptool", "call", "classify_sentiment", "--ptools", "testdata/ptools.json",
		"--input", `{"text": "I love it"}`, "--base-url", url, "--model", "local-model", "--trace-db", db)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, _, errOut = runPTK(t, "", "ptool", "call", "classify_sentiment", "--ptools", "testdata/ptools.json",
		"--input", `{"text": "Awful"}`, "--base-url", url, "--model", "local-model", "--trace-db", db, "--no-trace")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	s, err := trace.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ex, err := s.Examples(context.Background(), "classify_sentiment", -1)
	if err != nil || len(ex) != 1 || string(ex[0].Output) != `"positive"` || string(ex[0].Input) != `{"text":"I love it"}` || ex[0].Source != "model" {
		t.Fatalf("stored calls: %v %+v", err, ex)
	}
}

func TestRefactorCommands(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tickets.go")
	os.WriteFile(file, []byte(`package tickets

import (
	"context"

	"github.com/ptkit/ptk/ptool"
)

// Ticket is a support ticket.
type Ticket struct {
	Subject string `+"`json:\"subject\"`"+`
}

// Route routes a ticket to a queue.
func Route(ctx context.Context, t Ticket) (string, error) { return "", ptool.ErrFallback }
`), 0o644)
	code, out, errOut := runPTK(t, "", "refactor", "expand", file, "Route", "--stdout", "--keep-code")
	if code != 0 || !strings.Contains(out, `func NewRoutePtool(opts ...ptool.Option) *ptool.Distilled[Ticket, string] {`) {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	code, out, errOut = runPTK(t, "", "refactor", "expand", file, "Route", "--stdout")
	if code != 0 || !strings.Contains(out, `func NewRoutePtool(opts ...ptool.Option) *ptool.PTool[Ticket, string] {`) {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	before, _ := os.ReadFile(file)
	if strings.Contains(string(before), "NewRoutePtool") {
		t.Error("--stdout wrote the file")
	}
	if code, _, errOut = runPTK(t, "", "refactor", "expand", file, "Route"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	after, _ := os.ReadFile(file)
	if string(after) != out {
		t.Errorf("the file written differs from --stdout:\n%s", after)
	}
	if code, _, errOut = runPTK(t, "", "refactor", "distill", file, "route", "--code", filepath.Join(dir, "none.go")); code != 2 {
		t.Errorf("a missing --code file: exit %d: %s", code, errOut)
	}
}

// TestRefactorReplacesWhole: the file is replaced as a whole, through a
// file beside it renamed over it: its mode is kept, a link to it stays a
// link (the file it names is rewritten), no temporary file is left, and
// a refused rewrite leaves the file as it was.
func TestRefactorReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "route.go")
	src := "package tickets\n\nimport \"context\"\n\n// Route routes a ticket.\nfunc Route(ctx context.Context, subject string) (string, error) { return \"\", nil }\n"
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.go")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	// refused: with its code kept, Route would never let the model answer
	if code, _, _ := runPTK(t, "", "refactor", "expand", link, "Route", "--keep-code"); code == 0 {
		t.Error("a function that never falls back was expanded with --keep-code")
	}
	if b, _ := os.ReadFile(file); string(b) != src {
		t.Errorf("a refused rewrite changed the file:\n%s", b)
	}
	if code, _, errOut := runPTK(t, "", "refactor", "expand", link, "Route"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer a link: %v %v", fi.Mode(), err)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 (%v)", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), "func NewRoutePtool(") {
		t.Errorf("the file was not rewritten:\n%s", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("files left: %v", names)
	}
}

// TestTracesStatsDistilled: a distilled function's stored calls show in
// ptk traces stats with its coverage and fallback rate, by day.
func TestTracesStatsDistilled(t *testing.T) {
	db := filepath.Join(t.TempDir(), "traces.db")
	ctx := context.Background()
	s, err := trace.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	add := func(name string, at time.Time, code bool) {
		pc := trace.PtoolCall{Ptool: name, Input: json.RawMessage(`{}`), Output: json.RawMessage(`"x"`), Source: "model"}
		if code {
			pc.Source = "code"
		} else if name == "route" {
			pc.Fallback = true
		}
		if pc.Source == "model" {
			pc.Usage, pc.Cost = ptk.Usage{PromptTokens: 100, CompletionTokens: 10}, 0.25
		}
		if err := s.Write(ctx, &trace.Record{Run: trace.Run{ID: trace.NewID(), Kind: trace.KindPtool, Name: name, StartedAt: at},
			PtoolCalls: []trace.PtoolCall{pc}}); err != nil {
			t.Fatal(err)
		}
	}
	yesterday := now.Add(-24 * time.Hour)
	for i := range 4 { // yesterday: 1 of 4 by code
		add("route", yesterday, i == 0)
	}
	for i := range 4 { // today: 3 of 4
		add("route", now, i > 0)
	}
	add("plain", now, false) // never distilled
	// a call where the code failed: not answered by code
	if err := s.Write(ctx, &trace.Record{Run: trace.Run{ID: trace.NewID(), Kind: trace.KindPtool, Name: "route", StartedAt: now, Status: trace.StatusError},
		PtoolCalls: []trace.PtoolCall{{Ptool: "route", Input: json.RawMessage(`{}`), Source: "code", IsError: true}}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	code, out, errOut := runPTK(t, "", "traces", "stats", "--trace-db", db)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var line string
	for l := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(l, "route ") {
			line = l
		}
		if strings.HasPrefix(l, "plain ") && strings.Contains(out[strings.Index(out, "DISTILLED"):], "plain") {
			t.Errorf("a ptool never distilled is listed as distilled:\n%s", out)
		}
	}
	t.Log(out)
	if !strings.Contains(out, "DISTILLED") || !regexpMatch(`^route\s+9\s+4\s+1\s+4\s+44%\s+44%\s+`, line) ||
		!strings.Contains(line, yesterday.UTC().Format("01-02")+" 25% of 4") || !strings.Contains(line, now.UTC().Format("01-02")+" 60% of 5") {
		t.Errorf("the distilled line is %q in:\n%s", line, out)
	}
	// the PTOOLS section sums the calls' own tokens and cost: 4 model
	// calls of route, 110 tokens and $0.25 each
	if !regexpMatch(`(?m)^route\s+9\s+89%\s+\S+\s+\S+\s+440\s+\$1\.0000$`, out) {
		t.Errorf("the distilled line is %q in:\n%s", line, out)
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// TestDistillJSON: --json prints one JSON document on stdout, the file
// written in it (on main a "wrote FILE" line followed it); a failure is a
// document too, saying what happened (here: the patterns call failed).
func TestDistillJSON(t *testing.T) {
	needBwrap(t)
	dir, db, ptools := ticketStore(t)
	pats, examples := ticketPatterns(t, db)
	_, url := newFakeOpenAI(t, answer(pats), answer(distill.Candidate{Code: ticketCode, Test: ticketTest(examples)}))
	out := filepath.Join(dir, "route.go")
	code, stdout, stderr := runPTK(t, "", "distill", "route_ticket", "--ptools", ptools, "--trace-db", db, "--base-url", url,
		"--api-key", "k", "--model", "m", "--out", out, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc map[string]any
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&doc); err != nil || dec.More() {
		t.Fatalf("stdout is not one JSON document (%v):\n%s", err, stdout)
	}
	if doc["wrote"] != out || doc["package"] != "routeticket" || doc["accepted"] != true || doc["confined"] != true {
		t.Errorf("the document: wrote %v, package %v, accepted %v, confined %v", doc["wrote"], doc["package"], doc["accepted"], doc["confined"])
	}
	if !strings.Contains(stderr, "distill: round 1: accepted") {
		t.Errorf("stderr: %s", stderr)
	}

	// The model answers the patterns call with none that names an example.
	_, url = newFakeOpenAI(t, answer(map[string]any{"patterns": []any{map[string]any{"rule": "all sorts", "examples": []int{999}}}}),
		answer(map[string]any{"patterns": []any{}}))
	code, stdout, stderr = runPTK(t, "", "distill", "route_ticket", "--ptools", ptools, "--trace-db", db, "--base-url", url,
		"--api-key", "k", "--model", "m", "--out", filepath.Join(dir, "none.go"), "--json")
	doc = nil
	dec = json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&doc); err != nil || dec.More() || code != 1 {
		t.Fatalf("exit %d, stdout is not one JSON document (%v):\n%s", code, err, stdout)
	}
	if e, _ := doc["error"].(string); !strings.Contains(e, "asking the model for the patterns failed") || !strings.Contains(stderr, "asking the model for the patterns failed") {
		t.Errorf("error %q; stderr %s", e, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "none.go")); err == nil {
		t.Error("a file was written")
	}
}

// TestDistillNeedsBwrap: without bubblewrap ptk distill refuses (exit 2),
// saying how to install it and that --no-sandbox runs the code unconfined
// (on main it ran it unconfined unasked); with --no-sandbox it runs, and
// says so.
func TestDistillNeedsBwrap(t *testing.T) {
	dir, db, ptools := ticketStore(t)
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip(err)
	}
	bin := t.TempDir()
	os.Symlink(gobin, filepath.Join(bin, "go"))
	t.Setenv("PATH", bin) // the go command and nothing else
	pats, examples := ticketPatterns(t, db)
	f, url := newFakeOpenAI(t, answer(pats), answer(distill.Candidate{Code: ticketCode, Test: ticketTest(examples)}))
	code, _, stderr := runPTK(t, "", "distill", "route_ticket", "--ptools", ptools, "--trace-db", db, "--base-url", url,
		"--api-key", "k", "--model", "m", "--out", filepath.Join(dir, "route.go"))
	if code != 2 || !strings.Contains(stderr, "apt install bubblewrap") || !strings.Contains(stderr, "--no-sandbox") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(f.requests) != 0 {
		t.Error("the model was asked for code that could not be confined")
	}
	report := filepath.Join(dir, "report.json")
	code, stdout, stderr := runPTK(t, "", "distill", "route_ticket", "--ptools", ptools, "--trace-db", db, "--base-url", url,
		"--api-key", "k", "--model", "m", "--out", filepath.Join(dir, "route.go"), "--no-sandbox", "--report", report)
	if code != 0 || !strings.Contains(stderr, "--no-sandbox was given: the candidates' code runs unconfined") {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	var rep distill.Report
	data, _ := os.ReadFile(report)
	if json.Unmarshal(data, &rep); rep.Confined || !strings.HasPrefix(rep.Sandbox, "none: --no-sandbox was given") {
		t.Errorf("the report: confined %v, sandbox %q", rep.Confined, rep.Sandbox)
	}
}

// TestRefactorDistillScreens: ptk refactor distill refuses a generated
// file edited to import os/exec and run it from init, saying why, and
// leaves the user's file as it was.
func TestRefactorDistillScreens(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "reviews.go")
	user := "package reviews\n\nimport \"github.com/ptkit/ptk/ptool\"\n\nvar classify = ptool.New[string, string](\"classify\", \"Classify.\")\n"
	os.WriteFile(file, []byte(user), 0o644)
	gen := filepath.Join(dir, "classify_distilled.go")
	os.WriteFile(gen, []byte(`package classify

import (
	"context"
	"os/exec"

	"github.com/ptkit/ptk/ptool"
)

type In = string
type Out = string

func init() { exec.Command("sh", "-c", "touch /tmp/pwned").Run() }

func Distilled(ctx context.Context, in In) (Out, error) { return "", ptool.ErrFallback }
`), 0o644)
	code, _, stderr := runPTK(t, "", "refactor", "distill", file, "classify", "--code", gen)
	if code != 1 || !strings.Contains(stderr, "imports os/exec") || !strings.Contains(stderr, "an init function is not allowed") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(file); string(b) != user {
		t.Errorf("the file was changed:\n%s", b)
	}
}
