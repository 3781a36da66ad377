package temporal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/ptool"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/trace"
)

// The names ptk's workflows, activities, signals and queries are
// registered under: stable, so that workers and clients of different
// builds agree.
const (
	AgentWorkflow = "ptk.agent"
	ReActWorkflow = "ptk.react"
	PlanWorkflow  = "ptk.workflow"

	ModelActivity  = "ptk.model"
	ToolActivity   = "ptk.tool"
	StepActivity   = "ptk.step"
	RecordActivity = "ptk.record"

	// ApprovalSignal carries a Decision about a call that waits for one.
	ApprovalSignal = "ptk.approval"
	// ProgressQuery returns a run's Progress; its argument is the number
	// of events the caller has already seen.
	ProgressQuery = "ptk.progress"

	// DefaultTaskQueue is the task queue of ptk's workers and runs when
	// none is named.
	DefaultTaskQueue = "ptk"
)

// Defaults of a Worker's zero fields.
const (
	DefaultHeartbeat    = 10 * time.Second
	DefaultModelTimeout = 10 * time.Minute
	DefaultToolTimeout  = 30 * time.Minute
	DefaultModelTries   = 5
)

// Worker is what a Temporal worker of ptk runs activities with. Its fields
// are set before Register and not changed after. Every worker of a task
// queue should have the same tools and models: a run fixes the tools it
// may call when it starts (recorded in its history), and its activities
// may run on any worker.
type Worker struct {
	// Model returns the model a run names ("" for the worker's default).
	// It is called in the activities, and once per run when it starts
	// (recorded) to learn what the model can do.
	Model func(name string) (llm.Model, error)
	// Tools are the tools runs may call, by name.
	Tools []ptk.Tool
	// PTools are the ptools workflows and ReAct runs may call.
	PTools *ptool.Registry
	// Policy and Preset decide which calls to tools that are not read-only
	// run without asking (tool.Policy first, then the preset; default
	// tool.PresetAsk): the others wait for an ApprovalSignal.
	Policy *tool.Policy
	Preset tool.Preset
	// Instructions are the system prompt's own part for agent runs that
	// give none (where the tools work, say).
	Instructions string
	// Store records every run; nil records none.
	Store *trace.Store
	// Ledger keeps the calls of tools that are not read-only, so that each
	// runs at most once; nil runs a call again when its activity is retried
	// (see the package doc).
	Ledger *Ledger
	// Heartbeat is how long a model or tool call may go without a sign of
	// life from its worker before Temporal gives it to another
	// (DefaultHeartbeat when 0); the activities beat at a third of it.
	Heartbeat time.Duration
	// Identity names the worker in the ledger (default host:pid).
	Identity string
}

// Register registers the worker's workflows and activities with r (a
// worker.Worker).
func (w *Worker) Register(r worker.Registry) {
	w.RegisterWorkflows(r)
	w.RegisterActivities(r)
}

// RegisterActivities registers the worker's activities alone, with r.
func (w *Worker) RegisterActivities(r worker.ActivityRegistry) {
	r.RegisterActivityWithOptions(w.modelActivity, activity.RegisterOptions{Name: ModelActivity})
	r.RegisterActivityWithOptions(w.toolActivity, activity.RegisterOptions{Name: ToolActivity})
	r.RegisterActivityWithOptions(w.stepActivity, activity.RegisterOptions{Name: StepActivity})
	r.RegisterActivityWithOptions(w.recordActivity, activity.RegisterOptions{Name: RecordActivity})
}

// RegisterWorkflows registers the worker's workflows alone, with r (a
// worker.WorkflowReplayer, to check that histories replay).
func (w *Worker) RegisterWorkflows(r worker.WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(w.agentWorkflow, workflow.RegisterOptions{Name: AgentWorkflow})
	r.RegisterWorkflowWithOptions(w.reactWorkflow, workflow.RegisterOptions{Name: ReActWorkflow})
	r.RegisterWorkflowWithOptions(w.planWorkflow, workflow.RegisterOptions{Name: PlanWorkflow})
}

func (w *Worker) heartbeat() time.Duration {
	if w.Heartbeat > 0 {
		return w.Heartbeat
	}
	return DefaultHeartbeat
}

func (w *Worker) identity() string {
	if w.Identity != "" {
		return w.Identity
	}
	host, _ := os.Hostname()
	return host + ":" + strconv.Itoa(os.Getpid())
}

func (w *Worker) preset() tool.Preset {
	if w.Preset == "" {
		return tool.PresetAsk
	}
	return w.Preset
}

// ToolDesc is a tool as a run knows it: its info, with the flags that
// ptk.ToolInfo keeps out of JSON.
type ToolDesc struct {
	Info      ptk.ToolInfo `json:"info"`
	ReadOnly  bool         `json:"read_only"`
	Cacheable bool         `json:"cacheable"`
}

func describeTool(t ptk.Tool) ToolDesc {
	info := t.Info()
	return ToolDesc{Info: info, ReadOnly: info.ReadOnly, Cacheable: info.Cacheable}
}

// info is the tool's info with its flags.
func (d ToolDesc) info() ptk.ToolInfo {
	i := d.Info
	i.ReadOnly, i.Cacheable = d.ReadOnly, d.Cacheable
	return i
}

// ModelDesc is what a run learns of its model when it starts.
type ModelDesc struct {
	// Error says why the model cannot be had; the run fails with it.
	Error string `json:"error,omitempty"`
	// TextCompleter: the model continues one flattened prompt.
	TextCompleter bool `json:"text_completer,omitempty"`
	// Price is the model's price, when it has one.
	Price *llm.Price `json:"price,omitempty"`
	// Provider is who serves the model, as the GenAI conventions name it
	// (llm.ProviderOf): the runs' records keep it.
	Provider string `json:"provider,omitempty"`
}

func (w *Worker) describeModel(name string) ModelDesc {
	if w.Model == nil {
		return ModelDesc{Error: "the worker has no models"}
	}
	m, err := w.Model(name)
	if err != nil {
		return ModelDesc{Error: err.Error()}
	}
	var d ModelDesc
	if _, ok := llm.As[llm.TextCompleter](m); ok {
		d.TextCompleter = true
	}
	if p, ok := llm.PriceOf(m); ok {
		d.Price = &p
	}
	d.Provider = llm.ProviderOf(m)
	return d
}

// tools returns the worker's tools named (all of them with none), in
// the worker's order; a name it does not have is an error.
func (w *Worker) tools(names []string) ([]ToolDesc, error) {
	var out []ToolDesc
	have := map[string]bool{}
	for _, t := range w.Tools {
		info := t.Info()
		have[info.Name] = true
		if len(names) == 0 || slices.Contains(names, info.Name) {
			out = append(out, describeTool(t))
		}
	}
	var missing []string
	for _, n := range names {
		if !have[n] {
			missing = append(missing, strconv.Quote(n))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the worker has no tool %s", joinNames(missing))
	}
	return out, nil
}

// tool is the worker's tool or ptool called name.
func (w *Worker) tool(name string) (ptk.Tool, bool) {
	for _, t := range w.Tools {
		if t.Info().Name == name {
			return t, true
		}
	}
	if w.PTools != nil {
		if f, ok := w.PTools.Lookup(name); ok {
			return f, true
		}
	}
	return nil, false
}

func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	s := ""
	for i, n := range names[:len(names)-1] {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s + " or " + names[len(names)-1]
}

// beat records a heartbeat for the activity of ctx every third of the
// worker's heartbeat timeout, until the returned function is called.
func (w *Worker) beat(ctx context.Context, detail string) func() {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	every := w.heartbeat() / 3
	if hb := activity.GetInfo(ctx).HeartbeatTimeout; hb > 0 {
		every = hb / 3
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx, detail)
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// errNoModels is the error of a worker without models.
var errNoModels = errors.New("the worker has no models")
