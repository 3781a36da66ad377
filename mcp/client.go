package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/internal/secretenv"
	"github.com/ptkit/ptk/internal/version"
	"github.com/ptkit/ptk/protocol"
)

// Defaults for the zero values of Options.
const (
	DefaultCallTimeout  = 60 * time.Second
	DefaultStartTimeout = 60 * time.Second
	// DefaultMaxTools is the most tools ptk takes from one server.
	DefaultMaxTools = 1000
)

// maxPages bounds the pages of one listing of a server's tools, for a
// server that sends empty pages each naming another.
const maxPages = 100

// Options configure a [Client].
type Options struct {
	// CallTimeout bounds each tool call; default 60s. A server's own
	// "timeout" in the configuration overrides it.
	CallTimeout time.Duration
	// StartTimeout bounds a server's start: the process or connection, the
	// MCP handshake and the first list of tools; default 60s (npx may
	// download the server the first time).
	StartTimeout time.Duration
	// Stderr receives what stdio servers write on their standard error,
	// each line prefixed with the server's name. Nil discards it; either
	// way the last lines are kept, and quoted when a server fails.
	Stderr io.Writer
	// Logger reports what the client leaves out or changes on its own (a
	// tool whose schema ptk cannot use, a server's new list of tools, a
	// server that stopped). Nil discards the reports.
	Logger *slog.Logger
	// HTTPClient makes the requests to streamable HTTP servers; default
	// http.DefaultClient. The configuration's headers are added to it.
	HTTPClient *http.Client
	// HiddenEnv names environment variables a stdio server never gets from
	// ptk's environment, whatever their names look like (a model catalog's
	// api_key_env such as MY_SERVICE); a server's own "env" in the
	// configuration still gives it what it names.
	HiddenEnv []string
	// Implementation is how the client names itself to servers; default
	// "ptk".
	Implementation *sdk.Implementation
	// MaxMessageBytes bounds what ptk reads of each message from a server
	// (default DefaultMaxMessageBytes): a larger tool result is cut, says
	// so to the model, and the server stays usable.
	MaxMessageBytes int
	// MaxTools bounds the tools ptk takes from one server (default
	// DefaultMaxTools): a server that lists more, or whose list never
	// ends, gives its first MaxTools, and the cut is logged.
	MaxTools int
}

// Client holds the MCP servers of a configuration, started, and gives
// their tools as ptk tools. It is safe for concurrent use: a gateway may
// share one between its requests. Close stops the servers.
type Client struct {
	opts    Options
	servers []*server
}

// StartError is a server that could not be started or listed.
type StartError struct {
	Server string
	Err    error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("MCP server %q did not start: %v", e.Server, e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// Start starts the enabled servers of cfg, at the same time, and lists
// their tools. A server that fails to start (a command that is not found,
// a server that exits, one that does not answer within StartTimeout) is
// left out: its *StartError is returned, joined with the others, together
// with a Client of the servers that did start, which the caller must
// Close. ctx bounds the start only; the servers run until Close.
func Start(ctx context.Context, cfg *Config, opts Options) (*Client, error) {
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.MaxTools <= 0 {
		opts.MaxTools = DefaultMaxTools
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Implementation == nil {
		opts.Implementation = &sdk.Implementation{Name: "ptk", Version: version.Get().String()}
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	c := &Client{opts: opts}
	if cfg == nil {
		return c, nil
	}
	names := cfg.enabled()
	started := make([]*server, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			s := &server{name: name, cfg: cfg.Servers[name], opts: &c.opts}
			if err := s.start(ctx); err != nil {
				s.close()
				errs[i] = &StartError{Server: name, Err: err}
				return
			}
			started[i] = s
		})
	}
	wg.Wait()
	for _, s := range started {
		if s != nil {
			c.servers = append(c.servers, s)
		}
	}
	return c, errors.Join(errs...)
}

// Tools returns the servers' tools as they are now, server by server in
// the order of their names, each server's in its own order. A server that
// announces a new list (notifications/tools/list_changed) is listed again,
// and later calls of Tools return the new list; a tool taken from an
// earlier list that the server no longer has answers with an error.
func (c *Client) Tools() []ptk.Tool {
	var out []ptk.Tool
	for _, s := range c.servers {
		s.mu.Lock()
		for _, t := range s.tools {
			out = append(out, t)
		}
		s.mu.Unlock()
	}
	return out
}

// Servers returns the names of the servers that started.
func (c *Client) Servers() []string {
	var out []string
	for _, s := range c.servers {
		out = append(out, s.name)
	}
	return out
}

// Close stops every server: a stdio server's input is closed, it is given
// a second to exit, and then its whole process group is killed (npx and
// the node it starts alike).
func (c *Client) Close() error {
	var wg sync.WaitGroup
	for _, s := range c.servers {
		wg.Go(s.close)
	}
	wg.Wait()
	return nil
}

// server is one started server.
type server struct {
	name string
	cfg  ServerConfig
	opts *Options

	// session is set once, under mu, before the tools are listed.
	session *sdk.ClientSession
	stderr  *tail

	mu sync.Mutex
	// pid is the stdio server's process id, once it has started; its
	// process group has the same id.
	pid    int
	tools  []*Tool
	remote map[string]bool // the names of the server's tools now
	// stopped is why the connection ended, once it has.
	stopped error
	closing bool
	// listing is set while the tools are listed again, and again when
	// the server said they changed during that listing.
	listing bool
	again   bool
}

func (s *server) timeout() time.Duration {
	if d := time.Duration(s.cfg.Timeout); d > 0 {
		return d
	}
	return s.opts.CallTimeout
}

func (s *server) start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	var transport sdk.Transport
	if s.cfg.Command != "" {
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		// ptk's environment without its secrets (provider keys, client
		// keys, the trace store's password): a server gets the keys its
		// entry in mcp.json gives it, no others.
		cmd.Env, _ = secretenv.Filter{}.Hide(s.opts.HiddenEnv...).Apply(os.Environ())
		for _, k := range slices.Sorted(maps.Keys(s.cfg.Env)) {
			cmd.Env = append(cmd.Env, k+"="+s.cfg.Env[k])
		}
		cmd.Dir = s.cfg.Cwd
		s.stderr = newTail(s.name, s.opts.Stderr)
		cmd.Stderr = s.stderr
		ownGroup(cmd)
		// A server's children may hold stderr open after it exits; Close
		// kills them, and must not wait for them first.
		cmd.WaitDelay = 200 * time.Millisecond
		transport = &stdioTransport{cmd: cmd, s: s, max: s.opts.MaxMessageBytes, terminate: time.Second}
	} else {
		hc := s.opts.HTTPClient
		if hc == nil {
			hc = http.DefaultClient
		}
		c := *hc
		base := c.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		origin, err := originOf(s.cfg.URL)
		if err != nil {
			return fmt.Errorf("%s: %w", s.cfg.URL, err)
		}
		if len(s.cfg.Headers) > 0 {
			base = headerTransport{base: base, headers: s.cfg.Headers, origin: origin}
		}
		c.Transport = boundedBodies{base: base, max: s.opts.MaxMessageBytes}
		// A redirect to another origin is not followed: the server's
		// headers (the user's token for it) are its alone, and ptk speaks
		// MCP to no address but the one configured (not to a service on
		// the user's loopback a redirect names).
		check := c.CheckRedirect
		c.CheckRedirect = func(r *http.Request, via []*http.Request) error {
			if o, _ := originOf(r.URL.String()); o != origin {
				return fmt.Errorf("the server redirected to %s, another origin than %s: not followed", o, origin)
			}
			if check != nil {
				return check(r, via)
			}
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		}
		transport = &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: &c, MaxRetries: 1}
	}
	client := sdk.NewClient(s.opts.Implementation, &sdk.ClientOptions{
		// No roots, sampling or elicitation: ptk gives a server nothing
		// but calls.
		Capabilities: &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			go s.relist()
		},
	})
	// A server that does not answer in time is killed at once, so that
	// the SDK does not wait for it to exit on its own.
	stop := context.AfterFunc(ctx, s.kill)
	defer stop()
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return s.explain(ctx, err)
	}
	s.mu.Lock()
	s.session = session
	// The first listing is a listing like relist's: a change announced
	// while it runs (the SDK calls the handler on its own goroutine) waits
	// for it and lists again after it, never beside it.
	s.listing = true
	s.mu.Unlock()
	go func() {
		err := session.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closing {
			return
		}
		if err == nil {
			err = errors.New("it closed the connection")
		}
		s.stopped = err
		s.opts.Logger.Warn("MCP server stopped", "server", s.name, "err", err)
	}()
	if _, err := s.list(ctx); err != nil {
		return s.explain(ctx, err)
	}
	if s.listed() {
		go s.listAgain()
	}
	return nil
}

// explain makes a start failure one line: what went wrong, and what the
// server said on stderr.
func (s *server) explain(ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("it did not answer within %s", s.opts.StartTimeout)
	}
	if s.cfg.URL != "" {
		return fmt.Errorf("%s: %w", s.cfg.URL, err)
	}
	time.Sleep(50 * time.Millisecond) // let a dying server's last words arrive
	if last := s.stderr.last(); last != "" {
		return fmt.Errorf("%s: %w (its stderr: %s)", s.cfg.Command, err, last)
	}
	return fmt.Errorf("%s: %w", s.cfg.Command, err)
}

// list reads the server's tools and makes them ptk tools; it says how many
// there are now. One list runs at a time: the caller holds the listing flag.
func (s *server) list(ctx context.Context) (int, error) {
	var defs []*sdk.Tool
	// Page by page, to bound both the tools and the pages: a server's
	// list may never end.
	params := &sdk.ListToolsParams{}
	for page := 0; ; page++ {
		if page == maxPages || len(defs) >= s.opts.MaxTools {
			s.opts.Logger.Warn("MCP server lists more tools than ptk takes: the first ones kept", "server", s.name,
				"tools", len(defs), "max_tools", s.opts.MaxTools, "pages", page)
			break
		}
		res, err := s.session.ListTools(ctx, params)
		if err != nil {
			return 0, fmt.Errorf("listing its tools: %w", err)
		}
		defs = append(defs, res.Tools[:min(len(res.Tools), s.opts.MaxTools-len(defs))]...)
		if res.NextCursor == "" {
			break
		}
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
	tools := make([]*Tool, 0, len(defs))
	remote := make(map[string]bool, len(defs))
	taken := map[string]string{}
	for _, d := range defs {
		t, err := s.newTool(d)
		if err != nil {
			s.opts.Logger.Warn("MCP tool left out", "server", s.name, "tool", d.Name, "err", err)
			continue
		}
		if other, dup := taken[t.info.Name]; dup {
			s.opts.Logger.Warn("MCP tool left out", "server", s.name, "tool", d.Name,
				"err", fmt.Sprintf("its name %s is already %q's", t.info.Name, other))
			continue
		}
		taken[t.info.Name] = d.Name
		remote[d.Name] = true
		tools = append(tools, t)
	}
	s.mu.Lock()
	s.tools, s.remote = tools, remote
	s.mu.Unlock()
	return len(tools), nil
}

// relist reads the tools again after the server said they changed; one
// listing at a time, and one more if the server speaks during it.
func (s *server) relist() {
	s.mu.Lock()
	if s.session == nil {
		// Not connected yet: the first listing is still to come.
		s.mu.Unlock()
		return
	}
	if s.listing {
		s.again = true
		s.mu.Unlock()
		return
	}
	s.listing = true
	s.mu.Unlock()
	s.listAgain()
}

// listAgain lists the tools, and again while the server announces changes;
// its caller holds the listing flag, which it gives up.
func (s *server) listAgain() {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout())
		n, err := s.list(ctx)
		cancel()
		if err != nil {
			s.opts.Logger.Warn("MCP tools not listed again", "server", s.name, "err", err)
		} else {
			s.opts.Logger.Info("MCP tools listed again", "server", s.name, "tools", n)
		}
		if !s.listed() {
			return
		}
	}
}

// listed ends a listing. It reports whether the server announced a change
// meanwhile, in which case the caller keeps the flag and lists again.
func (s *server) listed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.again {
		s.again = false
		return true
	}
	s.listing = false
	return false
}

// newTool makes a server's tool a ptk tool.
func (s *server) newTool(d *sdk.Tool) (*Tool, error) {
	params := json.RawMessage(`{"type":"object","properties":{}}`)
	if d.InputSchema != nil {
		b, err := json.Marshal(d.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("its input schema: %w", err)
		}
		params = b
	}
	desc := d.Description
	if desc == "" {
		desc = d.Title
	}
	var ann sdk.ToolAnnotations
	if d.Annotations != nil {
		ann = *d.Annotations
	}
	t := &Tool{
		srv:    s,
		remote: d.Name,
		info: ptk.ToolInfo{
			Name:        ToolName(s.name, d.Name),
			Description: desc,
			Parameters:  params,
			// A tool that says it is read-only and also destructive is
			// taken at its worse word.
			ReadOnly: ann.ReadOnlyHint && (ann.DestructiveHint == nil || !*ann.DestructiveHint),
		},
		destructive: !ann.ReadOnlyHint && (ann.DestructiveHint == nil || *ann.DestructiveHint),
	}
	if _, err := protocol.NewParser([]ptk.ToolInfo{t.info}); err != nil {
		return nil, fmt.Errorf("ptk cannot use its input schema: %w", err)
	}
	return t, nil
}

// state returns the session, whether the server still offers the tool
// of that name, and why the server stopped if it has.
func (s *server) state(remote string) (session *sdk.ClientSession, offered bool, stopped error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session, s.remote[remote], s.stopped
}

func (s *server) close() {
	s.mu.Lock()
	s.closing = true
	session := s.session
	s.mu.Unlock()
	if session != nil {
		session.Close()
	}
	s.kill()
}

// kill kills what is left of a stdio server's process group.
func (s *server) kill() {
	s.mu.Lock()
	pid := s.pid
	s.mu.Unlock()
	if pid > 0 {
		killGroup(pid)
	}
}

// Tool is an MCP server's tool as a ptk tool. Its name is the server's
// and the tool's (see [ToolName]); its schema is the server's input
// schema; it is read-only when the server says so with readOnlyHint, and
// then needs no approval and runs in parallel with other read-only calls.
type Tool struct {
	srv         *server
	remote      string
	info        ptk.ToolInfo
	destructive bool
}

var _ ptk.Tool = (*Tool)(nil)

// Info describes the tool.
func (t *Tool) Info() ptk.ToolInfo { return t.info }

// Server returns the name of the tool's server in the configuration.
func (t *Tool) Server() string { return t.srv.name }

// RemoteName returns the tool's name at its server.
func (t *Tool) RemoteName() string { return t.remote }

// Destructive reports that the tool may destroy or overwrite, as MCP
// assumes unless a tool says otherwise (destructiveHint); only tools that
// are not read-only are destructive. Approvers can find it through
// wrappers with tool.As[*mcp.Tool].
func (t *Tool) Destructive() bool { return t.destructive }

// Run calls the tool at its server, within the call timeout. What goes
// wrong at the server (it stopped, it did not answer in time, it refused
// the call) is an error result the model reads; only the run's own end
// returns an error.
func (t *Tool) Run(ctx context.Context, args json.RawMessage) (ptk.Result, error) {
	s := t.srv
	session, offered, stopped := s.state(t.remote)
	if stopped != nil {
		return t.fail("is not running (%s); its tools cannot be used until ptk is started again", s.stoppedWhy(stopped)), nil
	}
	if !offered {
		return t.fail("no longer offers the tool %q (its list of tools changed)", t.remote), nil
	}
	if a := strings.TrimSpace(string(args)); a == "" || a == "null" {
		args = json.RawMessage("{}")
	}
	d := s.timeout()
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	res, err := session.CallTool(cctx, &sdk.CallToolParams{Name: t.remote, Arguments: args})
	if err == nil {
		r := ResultText(res)
		if r.IsError && r.Content == "" {
			r.Content = fmt.Sprintf("The MCP server %q reported that %s failed, without saying why.", s.name, t.remote)
		}
		return r, nil
	}
	if ctx.Err() != nil {
		return ptk.Result{}, ctx.Err()
	}
	if cctx.Err() != nil {
		return t.fail("did not answer within %s; the call was cancelled (a slow server can be given a \"timeout\" in the MCP configuration)", d), nil
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) && werr.Code != codeClientClosing {
		return t.fail("refused the call: %s", werr.Message), nil
	}
	// The connection broke: the server died, or wrote what is not
	// JSON-RPC, after which the SDK reads nothing more from it.
	time.Sleep(100 * time.Millisecond) // let a dying server's last words arrive
	s.mu.Lock()
	if s.stopped == nil {
		s.stopped = err
	}
	stopped = s.stopped
	s.mu.Unlock()
	return t.fail("stopped during the call (%s); its tools cannot be used until ptk is started again", s.stoppedWhy(stopped)), nil
}

// codeClientClosing is the SDK's JSON-RPC code for a call made on a
// connection that is closing.
const codeClientClosing = -32003

func (t *Tool) fail(format string, args ...any) ptk.Result {
	return ptk.Result{Content: fmt.Sprintf("The MCP server %q ", t.srv.name) + fmt.Sprintf(format, args...), IsError: true}
}

// stoppedWhy says why a server stopped, with its last words on stderr.
func (s *server) stoppedWhy(err error) string {
	msg := err.Error()
	if s.stderr != nil {
		if last := s.stderr.last(); last != "" {
			msg += "; its stderr: " + last
		}
	}
	return msg
}

// headerTransport adds the configuration's headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	origin  string // the headers go to this origin only
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if o, _ := originOf(r.URL.String()); o != h.origin {
		return h.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// originOf is the scheme, host and port of the URL u, lower-cased, the
// port given even when it is the scheme's default.
func originOf(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	scheme := strings.ToLower(p.Scheme)
	port := p.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(p.Hostname()), port), nil
}

// tail keeps the last bytes a server wrote on stderr, and copies every
// line to w, prefixed with the server's name.
type tail struct {
	name string
	w    io.Writer

	mu   sync.Mutex
	buf  []byte
	line []byte
}

const tailSize = 2 << 10

func newTail(name string, w io.Writer) *tail { return &tail{name: name, w: w} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailSize {
		t.buf = t.buf[len(t.buf)-tailSize:]
	}
	if t.w != nil {
		t.line = append(t.line, p...)
		for {
			i := strings.IndexByte(string(t.line), '\n')
			if i < 0 {
				break
			}
			fmt.Fprintf(t.w, "[%s] %s\n", t.name, t.line[:i])
			t.line = t.line[i+1:]
		}
	}
	return len(p), nil
}

// last returns the last few non-empty lines, joined into one.
func (t *tail) last() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var lines []string
	for l := range strings.SplitSeq(string(t.buf), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return clip(strings.Join(lines, " | "), 400)
}
