package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/mcp"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/tools/fs"
	"github.com/ptkit/ptk/tools/shell"
)

// session is one ACP session: a conversation in a folder, with its tools.
type session struct {
	a   *server
	id  string
	cwd string

	ws     *fs.Workspace
	mcp    *mcp.Client
	tools  []ptk.Tool
	byName map[string]ptk.Tool
	// editor is set when the files are the editor's (fs/*); terminal
	// when bash runs in its terminals.
	editor   bool
	terminal bool

	// turn is held by the prompt that runs; a prompt that comes while
	// another runs waits for it to end (the SDK cancels the other).
	turn sync.Mutex
	// run is the state of the running prompt; only the prompt's goroutine
	// touches it, and the approver, which the run calls on that goroutine.
	run   *turnState
	turns int // prompts run, under turn

	mu        sync.Mutex
	preset    tool.Preset
	modelName string
	model     llm.Model
	history   []ptk.Message
	always    map[string]bool // tools the user allowed always
	usage     ptk.Usage
	cost      float64
	cancel    context.CancelFunc // of the running prompt
	// diffs holds, by tool and arguments, the edits made by the running
	// prompt's calls, for their results; bash holds its calls that have
	// started and wait for a terminal.
	diffs     map[string][]diff
	bash      []startedCall
	terminals map[sdk.ToolCallId]string
}

// startedCall is a bash call whose tool started.
type startedCall struct {
	id      sdk.ToolCallId
	command string
}

// open starts a session in cwd: its workspace, its tools (through the
// editor where it offers to), the editor's MCP servers.
func (a *server) open(ctx context.Context, id, cwd string, servers []sdk.McpServer, history []ptk.Message) (*session, error) {
	caps := a.capabilities()
	s := &session{a: a, id: id, cwd: cwd, preset: a.cfg.Mode, model: a.cfg.Options.Model, modelName: a.cfg.Options.ModelName,
		history: history, always: map[string]bool{}, diffs: map[string][]diff{}}
	wsOpts := []fs.Option{fs.WithProtected(a.cfg.Protected...)}
	if caps.Fs.ReadTextFile && caps.Fs.WriteTextFile {
		s.editor = true
		wsOpts = append(wsOpts, fs.WithEditor(editorFiles{a: a, session: sdk.SessionId(id)}))
	}
	ws, err := fs.New(cwd, wsOpts...)
	if err != nil {
		return nil, invalid("cwd %s: %v", cwd, err)
	}
	s.ws = ws
	shOpts := []shell.Option{shell.WithProtected(a.cfg.Protected...)}
	switch {
	case a.cfg.Sandbox:
		shOpts = append(shOpts, shell.WithSandbox())
	case caps.Terminal:
		s.terminal = true
		shOpts = append(shOpts, shell.WithExecutor(terminalExec{s: s}))
	}
	sh, err := shell.New(cwd, shOpts...)
	if err != nil {
		ws.Close()
		return nil, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	reg, err := tool.NewRegistry(append(append(ws.Tools(), ws.EditTools()...), sh.Tool())...)
	if err != nil {
		ws.Close()
		return nil, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	tools := reg.Tools()
	if len(a.cfg.Tools) > 0 {
		if tools, err = reg.Select(a.cfg.Tools...); err != nil {
			ws.Close()
			return nil, sdk.NewInternalError(map[string]any{"error": err.Error()})
		}
	}
	for i, t := range tools {
		switch t.Info().Name {
		case "write_file", "edit_file":
			tools[i] = tool.Wrap(t, s.recordDiff)
		}
	}
	tools = append(tools, planTool)
	tools = append(tools, a.cfg.ExtraTools...)
	if len(servers) > 0 {
		cfg, err := mcpConfig(servers, cwd)
		if err != nil {
			ws.Close()
			return nil, err
		}
		client, err := mcp.Start(ctx, cfg, a.cfg.MCP)
		if err != nil {
			// A server that did not start is left out; the others serve.
			a.log.Warn("MCP servers of the editor", "session", id, "err", err)
		}
		s.mcp = client
		tools = append(tools, client.Tools()...)
	}
	if _, err := tool.NewRegistry(tools...); err != nil {
		s.close()
		return nil, invalid("the session's tools: %v", err)
	}
	s.tools = tools
	s.byName = map[string]ptk.Tool{}
	for _, t := range tools {
		s.byName[t.Info().Name] = t
	}
	a.mu.Lock()
	a.sessions[id] = s
	a.mu.Unlock()
	return s, nil
}

// close ends the session: a running prompt is cancelled, the MCP servers
// stop, the workspace closes.
func (s *session) close() {
	s.cancelRun()
	s.turn.Lock() // the run has ended
	defer s.turn.Unlock()
	if s.mcp != nil {
		s.mcp.Close()
	}
	s.ws.Close()
}

func (s *session) cancelRun() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
}

// mcpConfig turns the editor's MCP servers into package mcp's
// configuration, checked as a configuration file is.
func mcpConfig(servers []sdk.McpServer, cwd string) (*mcp.Config, error) {
	cfg := map[string]mcp.ServerConfig{}
	for _, srv := range servers {
		var name string
		var sc mcp.ServerConfig
		switch {
		case srv.Stdio != nil:
			name = srv.Stdio.Name
			sc = mcp.ServerConfig{Command: srv.Stdio.Command, Args: srv.Stdio.Args, Cwd: cwd, Env: map[string]string{}}
			for _, e := range srv.Stdio.Env {
				sc.Env[e.Name] = e.Value
			}
		case srv.Http != nil:
			name = srv.Http.Name
			sc = mcp.ServerConfig{URL: srv.Http.Url, Headers: map[string]string{}}
			for _, h := range srv.Http.Headers {
				sc.Headers[h.Name] = h.Value
			}
		default:
			return nil, invalid("ptk starts MCP servers over stdio and HTTP, not SSE or ACP")
		}
		if _, dup := cfg[name]; dup {
			return nil, invalid("two MCP servers are named %q", name)
		}
		cfg[name] = sc
	}
	data, err := json.Marshal(mcp.Config{Servers: cfg})
	if err != nil {
		return nil, invalid("MCP servers: %v", err)
	}
	c, err := mcp.ParseConfig(data)
	if err != nil {
		return nil, invalid("MCP servers: %v", err)
	}
	return c, nil
}

// The session's configuration options.
const (
	configMode  = "mode"
	configModel = "model"
)

func (s *session) mode() tool.Preset {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.preset
}

// ApprovalPreset is the session's mode now, which a durable turn
// (Config.Run) sends with the run.
func (s *session) ApprovalPreset() tool.Preset { return s.mode() }

func (s *session) setMode(id string) error {
	p, err := tool.ParsePreset(id)
	if err != nil || !slices.Contains(modes, p) {
		return invalid("no mode %q: ptk's modes are ask, auto-edit and plan", id)
	}
	s.mu.Lock()
	s.preset = p
	s.mu.Unlock()
	return nil
}

func (s *session) setModel(name string) error {
	if s.a.cfg.Resolve == nil {
		return invalid("the model of this agent is fixed")
	}
	m, err := s.a.cfg.Resolve(name)
	if err != nil {
		return invalid("model %q: %v", name, err)
	}
	s.mu.Lock()
	s.model, s.modelName = m, name
	s.mu.Unlock()
	return nil
}

func (s *session) modeState() *sdk.SessionModeState {
	st := &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(s.mode())}
	for _, p := range modes {
		d := p.Description()
		st.AvailableModes = append(st.AvailableModes, sdk.SessionMode{Id: sdk.SessionModeId(p), Name: p.Name(), Description: &d})
	}
	return st
}

func (s *session) configOptions() []sdk.SessionConfigOption {
	s.mu.Lock()
	preset, modelName := s.preset, s.modelName
	s.mu.Unlock()
	var modeOpts sdk.SessionConfigSelectOptionsUngrouped
	for _, p := range modes {
		d := p.Description()
		modeOpts = append(modeOpts, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(p), Name: p.Name(), Description: &d})
	}
	modeCat, modelCat := sdk.SessionConfigOptionCategoryMode, sdk.SessionConfigOptionCategoryModel
	modeDesc := "When ptk asks before it changes something"
	out := []sdk.SessionConfigOption{{Select: &sdk.SessionConfigOptionSelect{
		Id: configMode, Name: "Approval", Description: &modeDesc, Category: &modeCat, Type: "select",
		CurrentValue: sdk.SessionConfigValueId(preset), Options: sdk.SessionConfigSelectOptions{Ungrouped: &modeOpts}}}}
	models := map[string]Model{}
	for _, m := range s.a.cfg.Models {
		models[m.Name] = m
	}
	if _, ok := models[modelName]; !ok && modelName != "" {
		models[modelName] = Model{Name: modelName}
	}
	if len(models) == 0 {
		return out
	}
	var modelOpts sdk.SessionConfigSelectOptionsUngrouped
	for _, name := range slices.Sorted(maps.Keys(models)) {
		o := sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(name), Name: name}
		if d := models[name].Description; d != "" {
			o.Description = &d
		}
		modelOpts = append(modelOpts, o)
	}
	modelDesc := "The model that answers"
	if s.a.cfg.Resolve == nil {
		modelDesc = "The model that answers (fixed by ptk acp's flags)"
	}
	return append(out, sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{
		Id: configModel, Name: "Model", Description: &modelDesc, Category: &modelCat, Type: "select",
		CurrentValue: sdk.SessionConfigValueId(modelName), Options: sdk.SessionConfigSelectOptions{Ungrouped: &modelOpts}}})
}

// prompt runs one prompt turn: a command, or a run of the agent over the
// conversation.
func (s *session) prompt(ctx context.Context, blocks []sdk.ContentBlock) (sdk.PromptResponse, error) {
	text, err := userMessage(blocks)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	s.turn.Lock()
	defer s.turn.Unlock()
	if ctx.Err() != nil {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	if strings.HasPrefix(strings.TrimSpace(text), "/") {
		if reply, ok := s.command(strings.TrimSpace(text)); ok {
			s.a.notify(s.id, sdk.UpdateAgentMessageText(reply))
			return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.cancel = cancel
	opts := s.a.cfg.Options
	opts.Model, opts.ModelName = s.model, s.modelName
	history := append(slices.Clone(s.history), ptk.Message{Role: ptk.RoleUser, Content: text})
	clear(s.diffs)
	s.bash = nil
	clear(s.terminals)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cancel = nil
		s.mu.Unlock()
	}()
	opts.Tools = s.tools
	opts.Approver = s
	opts.ConversationID, opts.Store = "", nil
	opts.Instructions = strings.TrimSpace(s.a.cfg.Instructions(s.cwd) + "\n\n" + opts.Instructions)

	s.turns++
	st := &turnState{s: s, turn: s.turns, calls: map[int]*callState{}, byCall: map[string]*callState{}}
	s.run = st
	var res *agent.Result
	var runErr error
	run := s.a.cfg.Run
	if run == nil {
		run = agent.Stream
	}
	for e, err := range run(ctx, history, opts) {
		if e.Kind == agent.EventDone {
			res, runErr = e.Run, err
			continue
		}
		st.event(e)
	}
	st.flush()
	st.finish(ctx.Err() != nil)
	s.run = nil

	s.mu.Lock()
	if res != nil && len(res.Messages) > 0 {
		s.history = res.Messages
	} else {
		s.history = history
	}
	if res != nil {
		s.usage = s.usage.Add(res.Usage)
		s.cost += res.Cost
	}
	saved := slices.Clone(s.history)
	s.mu.Unlock()
	if err := s.a.cfg.Store.Save(context.WithoutCancel(ctx), s.id, saved); err != nil {
		s.a.log.Warn("saving the conversation", "session", s.id, "err", err)
	}
	resp := sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn, Meta: runMeta(res)}
	if runErr == nil {
		return resp, nil
	}
	switch code := ptk.CodeOf(runErr); code {
	case ptk.Canceled:
		resp.StopReason = sdk.StopReasonCancelled
	case ptk.MaxIterationsReached, ptk.MaxToolCallsReached, ptk.DuplicateToolCall:
		resp.StopReason = sdk.StopReasonMaxTurnRequests
		s.a.notify(s.id, sdk.UpdateAgentMessageText("\n\n(ptk stopped: "+errorText(runErr)+")"))
	case ptk.BudgetExceeded:
		resp.StopReason = sdk.StopReasonMaxTokens
		s.a.notify(s.id, sdk.UpdateAgentMessageText("\n\n(ptk stopped: "+errorText(runErr)+")"))
	default:
		if ctx.Err() != nil {
			resp.StopReason = sdk.StopReasonCancelled
			return resp, nil
		}
		msg := errorText(runErr)
		if s.a.cfg.Hint != nil {
			if h := s.a.cfg.Hint(runErr); h != "" {
				msg = h
			}
		}
		return sdk.PromptResponse{}, &sdk.RequestError{Code: -32603, Message: msg, Data: map[string]any{"code": string(code)}}
	}
	return resp, nil
}

// errorText is a run's error for the user.
func errorText(err error) string {
	var pe *ptk.Error
	if errors.As(err, &pe) && pe.Message != "" {
		return pe.Message
	}
	return err.Error()
}

// runMeta is what ptk tells the editor of a run beside the protocol's
// fields: its model calls (iterations), tool calls, tokens and cost, in
// _meta.ptk.
func runMeta(res *agent.Result) map[string]any {
	if res == nil {
		return nil
	}
	return map[string]any{"ptk": map[string]any{
		"iterations": res.Iterations, "toolCalls": res.TotalToolCalls,
		"promptTokens": res.Usage.PromptTokens, "completionTokens": res.Usage.CompletionTokens,
		"cost": res.Cost, "durationMs": res.Duration.Milliseconds(),
	}}
}

// userMessage turns a prompt's content into the user's message: its text,
// the files the editor embedded (neutralised: a file's text is data), and
// the files it links to, which the model can read.
func userMessage(blocks []sdk.ContentBlock) (string, error) {
	var b strings.Builder
	for _, c := range blocks {
		switch {
		case c.Text != nil:
			b.WriteString(c.Text.Text)
		case c.ResourceLink != nil:
			fmt.Fprintf(&b, "\n[%s](%s)\n", oneLine(c.ResourceLink.Name), oneLine(c.ResourceLink.Uri))
		case c.Resource != nil && c.Resource.Resource.TextResourceContents != nil:
			r := c.Resource.Resource.TextResourceContents
			fence := "```"
			for strings.Contains(r.Text, fence) {
				fence += "`"
			}
			fmt.Fprintf(&b, "\n\nThe editor attached %s:\n%s\n%s\n%s\n", oneLine(r.Uri), fence, neutralize(r.Text), fence)
		case c.Resource != nil:
			return "", invalid("ptk takes text resources, not binary ones")
		default:
			return "", invalid("ptk takes text, resources and resource links, not images or audio")
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		return "", invalid("the prompt is empty")
	}
	return b.String(), nil
}
