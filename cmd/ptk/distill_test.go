package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
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

const ticketTest = `package distilled

import (
	"context"
	"testing"
)

func TestDistilled(t *testing.T) {
	got, err := Distilled(context.Background(), In{Subject: "Invoice 3 is wrong", Priority: 4})
	if err != nil || got != (Out{Queue: "billing", Urgent: true}) {
		t.Fatalf("%+v, %v", got, err)
	}
}
`

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

// TestDistillEndToEnd: 60 stored calls of a declarative ptool, ptk
// distill with a scripted model, and the Go file it writes wired into a
// program that answers most inputs without a model call.
func TestDistillEndToEnd(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "traces.db")
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
	ptools := filepath.Join(dir, "ptools.json")
	os.WriteFile(ptools, []byte(ticketPtools), 0o644)
	// an unknown model on an OpenAI-compatible API is asked for
	// structured output: the answer comes as {"answer": ...}
	answer := func(v any) fakeReply {
		b, _ := json.Marshal(map[string]any{"answer": v})
		return fakeReply{content: string(b)}
	}
	fake, url := newFakeOpenAI(t, answer("Invoices go to billing, errors to tech; urgent when priority is 3 or more."),
		answer(distill.Candidate{Code: ticketCode, Test: ticketTest}))
	prog := filepath.Join(dir, "prog")
	os.Mkdir(prog, 0o755)
	root, _ := filepath.Abs("../..")
	report := filepath.Join(dir, "report.json")
	code, out, errOut := runPTK(t, "", "distill", "route_ticket", "--ptools", ptools, "--trace-db", db, "--base-url", url,
		"--api-key", "k", "--model", "m", "--module", root, "--out", filepath.Join(prog, "route.go"), "--package", "main",
		"--report", report, "--case-timeout", "1s")
	if code != 0 {
		if n := len(fake.requests); n > 0 {
			t.Log(fake.requests[n-1]["messages"])
		}
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	t.Log(out)
	var rep distill.Report
	data, _ := os.ReadFile(report)
	if err := json.Unmarshal(data, &rep); err != nil || !rep.Accepted || rep.Train+rep.HeldOut != 60 {
		t.Fatalf("report: %v %+v", err, rep)
	}
	if !strings.Contains(out, "accepted after 1 round") || !strings.Contains(out, "wrote ") {
		t.Errorf("summary:\n%s", out)
	}
	// the report is in the trace store
	s, _ = trace.Open(ctx, db)
	runs, err := s.List(ctx, trace.Filter{Kind: "distill"})
	s.Close()
	if err != nil || len(runs) != 1 || runs[0].Name != "route_ticket" {
		t.Errorf("distill runs in the store: %v %+v", err, runs)
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
