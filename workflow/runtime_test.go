package workflow

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk/ptool"
)

// queueRuntime runs each started step when Next is called, first started
// first, on the caller's goroutine, with a clock that moves a second a
// read: a scheduler that must not depend on goroutines or the system clock.
type queueRuntime struct {
	reg     *ptool.Registry
	now     time.Time
	queue   []int
	steps   map[int]Step
	started []string
}

func (q *queueRuntime) Now() time.Time {
	q.now = q.now.Add(time.Second)
	return q.now
}

func (q *queueRuntime) Start(_ context.Context, i int, s Step) {
	q.queue = append(q.queue, i)
	q.steps[i] = s
	q.started = append(q.started, s.PTool+string(s.Input))
}

func (q *queueRuntime) Next(ctx context.Context) (int, Step) {
	i := q.queue[0]
	q.queue = q.queue[1:]
	s := q.steps[i]
	RunStep(ctx, q.reg, &s)
	return i, s
}

func TestARuntimeRunsTheSteps(t *testing.T) {
	reg := orders(t, answer(`{"items": ["pizza", "salad"]}`), answer(`"a round flatbread"`), answer(`2`))
	q := &queueRuntime{reg: reg, steps: map[int]Step{}}
	tr, err := Run(context.Background(), threeSteps(), Options{Registry: reg, Runtime: q})
	if err != nil {
		t.Fatal(err)
	}
	want := `extract_items{"text":"a pizza and a salad"} describe_item{"item":"pizza"} count_items{"items":["pizza","salad"],"note":"a round flatbread"}`
	if got := strings.Join(q.started, " "); got != want {
		t.Errorf("started %s\nwant %s", got, want)
	}
	var n int
	if err := json.Unmarshal(tr.Steps[2].Result, &n); err != nil || n != 2 {
		t.Errorf("result %s, %v", tr.Steps[2].Result, err)
	}
	if tr.Duration != time.Second {
		t.Errorf("duration %v, want the runtime's 1s", tr.Duration)
	}
}

func TestRunStepOfAnUnknownPTool(t *testing.T) {
	s := Step{PTool: "nope", Input: json.RawMessage(`{}`)}
	RunStep(context.Background(), ptool.NewRegistry(), &s)
	if s.Status != StatusFailed || !strings.Contains(s.Error, `no ptool "nope"`) {
		t.Errorf("%s %q", s.Status, s.Error)
	}
}
