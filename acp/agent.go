package acp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/mcp"
	"github.com/ptkit/ptk/tool"
	"github.com/ptkit/ptk/trace"
)

// Config is what every session of an agent gets. Serve does not change it.
type Config struct {
	// Options are the runs' options: the model (Model and ModelName, the
	// default of new sessions), the limits, the mode, StreamModel.
	// Tools, Approver, ConversationID and Store are set by each session.
	Options agent.Options
	// Models are the models the user may pick for a session (the catalog's);
	// Resolve makes one from its name. Without Resolve the model is fixed.
	Models  []Model
	Resolve func(name string) (llm.Model, error)
	// Tools names the built-in tools a session gets (read_file, list_dir,
	// glob, grep, write_file, edit_file, bash); empty gives them all.
	Tools []string
	// Sandbox runs bash under bubblewrap on this machine (tools/shell's
	// sandbox), also when the editor offers terminals.
	Sandbox bool
	// Protected are folders the file tools never write, even inside a
	// session's workspace: ptk's own configuration, checkpoints and traces
	// (tools/fs.WithProtected).
	Protected []string
	// ExtraTools are given to every session beside the built-in ones and the
	// editor's MCP servers' (the servers of ptk's own MCP configuration).
	ExtraTools []ptk.Tool
	// Policy is the user's policy, which decides first about every call
	// that may change something; PolicyFile is where it came from, for the
	// model's messages.
	Policy     *tool.Policy
	PolicyFile string
	// Mode is the approval preset new sessions start in: plan, ask or
	// auto-edit; default ask.
	Mode tool.Preset
	// Store keeps the sessions' conversations, by session id, for
	// session/load; default a store in memory, which lasts as long as the
	// process. A store that can list its conversations (Lister, as the
	// trace store does) makes session/list work.
	Store agent.Store
	// MCP configures the clients of the editor's MCP servers.
	MCP mcp.Options
	// Instructions returns the system prompt's own part for a session in
	// the folder cwd; default a short coding-assistant prompt.
	Instructions func(cwd string) string
	// Hint turns a failed run's error into one line that says how to fix
	// it ("" for none), shown to the user with the error.
	Hint func(error) string
	// Logger reports what the agent cannot tell the editor; default
	// discards.
	Logger *slog.Logger
	// Version is ptk's version, told to the editor.
	Version string
	// Run runs a prompt turn; default agent.Stream. ptk acp --temporal
	// runs it durably on ptk's Temporal workers: the session is still its
	// Approver, so a call the run waits for is the editor's
	// session/request_permission, and session/cancel cancels the run.
	Run func(ctx context.Context, history []ptk.Message, opts agent.Options) iter.Seq2[agent.Event, error]
}

// Model is a model the user may pick.
type Model struct {
	Name        string
	Description string
}

// Lister is a Store that lists its conversations, the last updated first
// (trace.Store).
type Lister interface {
	Conversations(ctx context.Context) ([]trace.Conversation, error)
}

var _ Lister = (*trace.Store)(nil)

// Serve runs an ACP agent on one connection: it reads the client's
// messages from in and writes its own to out, until in ends or ctx is done.
// Then the sessions end: their runs are cancelled, their MCP servers
// stopped.
func Serve(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	a, err := newAgent(cfg)
	if err != nil {
		return err
	}
	// The connection starts reading at once, and its reader logs when in
	// ends; the SDK's SetLogger is not synchronised with it. The first
	// read waits until the logger is set.
	gate := make(chan struct{})
	conn := sdk.NewAgentSideConnection(a, out, gatedReader{in, gate})
	conn.SetLogger(a.log)
	close(gate)
	a.conn = conn
	close(a.ready)
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	a.closeAll()
	return nil
}

// server is the agent of one connection.
type server struct {
	cfg   Config
	log   *slog.Logger
	conn  *sdk.AgentSideConnection
	ready chan struct{} // closed once conn is set

	mu       sync.Mutex
	caps     sdk.ClientCapabilities
	sessions map[string]*session
}

var (
	_ sdk.Agent       = (*server)(nil)
	_ sdk.AgentLoader = (*server)(nil)
)

func newAgent(cfg Config) (*server, error) {
	if cfg.Options.Model == nil {
		return nil, errors.New("acp: no model: set Config.Options.Model")
	}
	if cfg.Mode == "" {
		cfg.Mode = tool.PresetAsk
	}
	if !slices.Contains(modes, cfg.Mode) {
		return nil, fmt.Errorf("acp: the mode must be plan, ask or auto-edit, not %q", cfg.Mode)
	}
	if cfg.Store == nil {
		cfg.Store = &agent.MemoryStore{}
	}
	if cfg.Instructions == nil {
		cfg.Instructions = defaultInstructions
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &server{cfg: cfg, log: log, ready: make(chan struct{}), sessions: map[string]*session{}}, nil
}

func defaultInstructions(cwd string) string {
	return "You are a coding assistant working in the folder " + cwd + ", inside the user's editor. " +
		"Use the tools to look at the files before you answer or change them; paths are relative to that folder. " +
		"Make the smallest change that does the job, and check it (build, tests) when you can. " +
		"For a task of several steps, write your plan with update_plan first and keep it up to date. " +
		"When you have done what was asked, answer the user directly and concisely."
}

// modes are the presets a session may be in, the order the editor shows.
var modes = []tool.Preset{tool.PresetAsk, tool.PresetAutoEdit, tool.PresetPlan}

// client returns the connection, once Serve has set it.
func (a *server) client() *sdk.AgentSideConnection {
	<-a.ready
	return a.conn
}

// notify sends a session/update. It is sent even when the prompt that
// makes it was cancelled: the editor still gets what happened before the
// turn ends.
func (a *server) notify(id string, u sdk.SessionUpdate) {
	err := a.client().SessionUpdate(context.Background(), sdk.SessionNotification{SessionId: sdk.SessionId(id), Update: u})
	if err != nil {
		a.log.Debug("session/update not sent", "session", id, "err", err)
	}
}

func (a *server) closeAll() {
	a.mu.Lock()
	all := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		all = append(all, s)
	}
	a.sessions = map[string]*session{}
	a.mu.Unlock()
	for _, s := range all {
		s.close()
	}
}

func (a *server) capabilities() sdk.ClientCapabilities {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.caps
}

func (a *server) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	a.mu.Lock()
	a.caps = p.ClientCapabilities
	a.mu.Unlock()
	title := "ptk"
	version := a.cfg.Version
	if version == "" {
		version = "dev"
	}
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			McpCapabilities:    sdk.McpCapabilities{Http: true},
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true},
			SessionCapabilities: sdk.SessionCapabilities{
				Close: &sdk.SessionCloseCapabilities{},
				List:  a.listCapability(),
			},
		},
		AgentInfo:   &sdk.Implementation{Name: "ptk", Title: &title, Version: version},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

func (a *server) listCapability() *sdk.SessionListCapabilities {
	if _, ok := a.cfg.Store.(Lister); ok {
		return &sdk.SessionListCapabilities{}
	}
	return nil
}

func (a *server) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// invalid is the error of a request whose parameters make no sense.
func invalid(format string, args ...any) error {
	return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf(format, args...)})
}

// notFound is the error for a session that is not there (ACP's
// "Resource not found").
func notFound(id string) error {
	return &sdk.RequestError{Code: -32002, Message: "Resource not found", Data: map[string]any{"error": "no session " + quote(id)}}
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// checkCwd checks a session's folder: an absolute path to a directory.
func checkCwd(cwd string) (string, error) {
	if !filepath.IsAbs(cwd) {
		return "", invalid("cwd must be an absolute path, not %q", cwd)
	}
	fi, err := os.Stat(cwd)
	if err != nil {
		return "", invalid("cwd %s: %v", cwd, err)
	}
	if !fi.IsDir() {
		return "", invalid("cwd %s is not a directory", cwd)
	}
	return filepath.Clean(cwd), nil
}

// newID makes a session id that names its folder: ptk-, a hash of the
// folder, the time and a random part. session/list finds a folder's
// conversations by the hash.
func newID(cwd string) string {
	var r [4]byte
	rand.Read(r[:])
	return folderPrefix(cwd) + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(r[:])
}

// folderPrefix is the part of a session id that names its folder:
// prefixLen bytes.
func folderPrefix(cwd string) string {
	h := sha256.Sum256([]byte(filepath.Clean(cwd)))
	return "acp-" + hex.EncodeToString(h[:5]) + "-"
}

const prefixLen = len("acp-") + 10 + len("-")

func (a *server) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	cwd, err := checkCwd(p.Cwd)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	s, err := a.open(ctx, newID(cwd), cwd, p.McpServers, nil)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	// The commands are announced once the editor knows the session: the
	// SDK writes the response when this returns, so the notification
	// follows a moment later (as other agents do it).
	go func() {
		time.Sleep(10 * time.Millisecond)
		a.notify(s.id, commandsUpdate())
	}()
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(s.id), Modes: s.modeState(), ConfigOptions: s.configOptions()}, nil
}

func (a *server) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	cwd, err := checkCwd(p.Cwd)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	id := string(p.SessionId)
	// A session open already is opened anew from the store: what it runs
	// is cancelled first.
	a.mu.Lock()
	open := a.sessions[id]
	delete(a.sessions, id)
	a.mu.Unlock()
	if open != nil {
		open.close()
	}
	history, err := a.cfg.Store.Load(ctx, id)
	if err != nil {
		return sdk.LoadSessionResponse{}, sdk.NewInternalError(map[string]any{"error": "loading the conversation: " + err.Error()})
	}
	if len(history) == 0 {
		return sdk.LoadSessionResponse{}, notFound(id)
	}
	s, err := a.open(ctx, id, cwd, p.McpServers, history)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	s.replay(history)
	a.notify(s.id, commandsUpdate())
	return sdk.LoadSessionResponse{Modes: s.modeState(), ConfigOptions: s.configOptions()}, nil
}

func (a *server) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}

func (a *server) CloseSession(_ context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	a.mu.Lock()
	s := a.sessions[string(p.SessionId)]
	delete(a.sessions, string(p.SessionId))
	a.mu.Unlock()
	if s == nil {
		return sdk.CloseSessionResponse{}, notFound(string(p.SessionId))
	}
	s.close()
	return sdk.CloseSessionResponse{}, nil
}

// maxListed bounds the sessions session/list returns.
const maxListed = 100

func (a *server) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	l, ok := a.cfg.Store.(Lister)
	if !ok {
		return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionList)
	}
	// A session's id names its folder by a hash: the folders asked about
	// are the one the editor names, else those of this connection's
	// sessions.
	folders := map[string]string{}
	if p.Cwd != nil && *p.Cwd != "" {
		folders[folderPrefix(*p.Cwd)] = filepath.Clean(*p.Cwd)
	} else {
		a.mu.Lock()
		for _, s := range a.sessions {
			folders[folderPrefix(s.cwd)] = s.cwd
		}
		a.mu.Unlock()
	}
	convs, err := l.Conversations(ctx)
	if err != nil {
		return sdk.ListSessionsResponse{}, sdk.NewInternalError(map[string]any{"error": "listing the conversations: " + err.Error()})
	}
	out := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	for _, c := range convs {
		if len(out.Sessions) == maxListed {
			break
		}
		if len(c.ID) < prefixLen {
			continue
		}
		cwd, ok := folders[c.ID[:prefixLen]]
		if !ok || c.Messages == 0 {
			continue
		}
		updated := c.UpdatedAt.UTC().Format(time.RFC3339)
		info := sdk.SessionInfo{SessionId: sdk.SessionId(c.ID), Cwd: cwd, UpdatedAt: &updated}
		if msgs, err := a.cfg.Store.Load(ctx, c.ID); err == nil {
			if t := title(msgs); t != "" {
				info.Title = &t
			}
		}
		out.Sessions = append(out.Sessions, info)
	}
	return out, nil
}

// title names a conversation by its first user message, on one line.
func title(msgs []ptk.Message) string {
	for _, m := range msgs {
		if m.Role == ptk.RoleUser {
			return clip(oneLine(m.Content), 80)
		}
	}
	return ""
}

func (a *server) session(id string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// sessionFor returns the open session a request names, or the error to
// answer with.
func (a *server) sessionFor(id sdk.SessionId) (*session, error) {
	if s := a.session(string(id)); s != nil {
		return s, nil
	}
	return nil, notFound(string(id))
}

func (a *server) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	s, err := a.sessionFor(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	return s.prompt(ctx, p.Prompt)
}

func (a *server) Cancel(_ context.Context, p sdk.CancelNotification) error {
	// The SDK cancels the prompt's context; a question to the user, a tool
	// and the model call end with it, and the turn ends as cancelled.
	if s := a.session(string(p.SessionId)); s != nil {
		s.cancelRun()
	}
	return nil
}

func (a *server) SetSessionMode(_ context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	s, err := a.sessionFor(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	if err := s.setMode(string(p.ModeId)); err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	a.notify(s.id, sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: s.configOptions()}})
	return sdk.SetSessionModeResponse{}, nil
}

func (a *server) SetSessionConfigOption(_ context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	v := p.ValueId
	if v == nil {
		return sdk.SetSessionConfigOptionResponse{}, invalid("ptk's options take a value id, not a boolean")
	}
	s, err := a.sessionFor(v.SessionId)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	switch v.ConfigId {
	case configMode:
		if err := s.setMode(string(v.Value)); err != nil {
			return sdk.SetSessionConfigOptionResponse{}, err
		}
		a.notify(s.id, sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: sdk.SessionModeId(s.mode())}})
	case configModel:
		if err := s.setModel(string(v.Value)); err != nil {
			return sdk.SetSessionConfigOptionResponse{}, err
		}
	default:
		return sdk.SetSessionConfigOptionResponse{}, invalid("no option %q: ptk has %q and %q", v.ConfigId, configMode, configModel)
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: s.configOptions()}, nil
}

// oneLine makes s one line: its control characters (line breaks, escapes)
// become spaces, runs of spaces one.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	return strings.Join(strings.Fields(s), " ")
}

// clip cuts s to at most n runes, with "…".
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// gatedReader reads from r once gate is closed.
type gatedReader struct {
	r    io.Reader
	gate chan struct{}
}

func (g gatedReader) Read(p []byte) (int, error) {
	<-g.gate
	return g.r.Read(p)
}
