// Package dashboard serves ptk's trace store as a web page: the runs,
// newest first, with filters; a run's timeline of model and tool calls;
// analytics per tool, model and ptool; all live, as runs recorded by other
// processes appear within a second or two over a WebSocket.
//
// The page is embedded in the binary (static/: plain HTML, CSS and
// JavaScript, no build step, nothing fetched from elsewhere). Its one
// write is a label (a run or a call marked good or bad), and only with
// Options.Labels: a POST of JSON, which passes httpguard (no other site's
// page can send it: JSON needs CORS, and its Origin is refused) and the
// token.
package dashboard

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/ptkit/ptk/httpguard"
	"github.com/ptkit/ptk/trace"
)

//go:embed static
var static embed.FS

// Options configure a Handler.
type Options struct {
	// Token, when set, must come with every request, as "Authorization:
	// Bearer TOKEN" or, for the page and its WebSocket, ?token=TOKEN.
	Token string
	// Poll is how often the store is looked at for new runs (default 1s).
	Poll time.Duration
	// AllowedHosts are names the dashboard may be reached by besides the
	// address it listens on (and localhost there): a reverse proxy's. A
	// request with any other Host is refused, so that a web page made to
	// resolve to this machine (DNS rebinding) reads nothing; see package
	// httpguard, whose checks every request passes first.
	AllowedHosts []string
	// Labels, when set, is the store labels are written to (the same
	// store as the one read, opened for writing): the page can mark a run
	// or a call good or bad. Without it the dashboard never writes.
	Labels *trace.Store
}

// Handler serves the dashboard of one store.
type Handler struct {
	s     *trace.Store
	opts  Options
	mux   *http.ServeMux
	guard http.Handler

	mu      sync.Mutex
	clients map[chan trace.Mark]struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	polling bool
}

// New returns the dashboard of s. Close stops its live updates.
func New(s *trace.Store, opts Options) *Handler {
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	h := &Handler{s: s, opts: opts, mux: http.NewServeMux(), clients: map[chan trace.Mark]struct{}{}}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	sub, _ := fs.Sub(static, "static")
	h.mux.Handle("GET /", http.FileServerFS(sub))
	h.mux.HandleFunc("GET /api/runs", h.runs)
	h.mux.HandleFunc("GET /api/runs/{id}", h.run)
	h.mux.HandleFunc("GET /api/stats", h.stats)
	h.mux.HandleFunc("GET /api/series", h.series)
	h.mux.HandleFunc("GET /api/live", h.live)
	h.mux.HandleFunc("POST /api/runs/{id}/labels", h.label)
	h.mux.HandleFunc("GET /api/config", h.config)
	h.guard = httpguard.Guard(httpguard.Options{Hosts: opts.AllowedHosts})(http.HandlerFunc(h.serve))
	return h
}

// ServeHTTP checks the request's Host, Origin and type (httpguard), then
// the token, then serves.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.guard.ServeHTTP(w, r) }

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	if h.opts.Token != "" && !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="ptk dashboard"`)
		http.Error(w, "a token is needed: open the address ptk dashboard printed, with its ?token=", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self' ws: wss:; img-src 'self' data:")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) authorized(r *http.Request) bool {
	got := r.URL.Query().Get("token")
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		got = strings.TrimPrefix(a, "Bearer ")
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(h.opts.Token)) == 1
}

// Close ends the live updates: their WebSockets close, and pages
// reconnect to whichever dashboard serves next.
func (h *Handler) Close() { h.cancel() }

func filterOf(r *http.Request) (trace.Filter, error) {
	q := r.URL.Query()
	f := trace.Filter{Kind: trace.Kind(q.Get("kind")), Name: q.Get("name"), Tool: q.Get("tool"), Model: q.Get("model"),
		Status: trace.Status(q.Get("status")), Text: q.Get("text")}
	if s := q.Get("since"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return f, errors.New("since: " + err.Error())
		}
		f.Since = time.Now().Add(-d)
	}
	f.Limit, _ = strconv.Atoi(q.Get("limit"))
	f.Offset, _ = strconv.Atoi(q.Get("offset"))
	f.Limit = min(max(f.Limit, 0), 500)
	return f, nil
}

func writeJSON(w http.ResponseWriter, v any, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(v)
}

func (h *Handler) runs(w http.ResponseWriter, r *http.Request) {
	f, err := filterOf(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	runs, err := h.s.List(r.Context(), f)
	if err != nil {
		writeJSON(w, nil, err)
		return
	}
	total, err := h.s.Count(r.Context(), f)
	writeJSON(w, map[string]any{"runs": runs, "total": total}, err)
}

func (h *Handler) run(w http.ResponseWriter, r *http.Request) {
	rec, err := h.s.Get(r.Context(), r.PathValue("id"))
	if errors.Is(err, trace.ErrNotFound) {
		http.Error(w, "no run "+r.PathValue("id"), http.StatusNotFound)
		return
	}
	if err != nil {
		writeJSON(w, nil, err)
		return
	}
	// The steps of a workflow, or any run started by this one; the first
	// few whole, so that the waterfall draws their spans under this run's
	// (a gateway request's agent run).
	children, err := h.s.List(r.Context(), trace.Filter{Parent: rec.ID, Limit: 500})
	if err != nil {
		writeJSON(w, nil, err)
		return
	}
	kids := []*trace.Record{}
	for i := len(children) - 1; i >= 0 && len(kids) < maxChildSpans; i-- { // oldest first
		kid, err := h.s.Get(r.Context(), children[i].ID)
		if err != nil {
			continue // pruned meanwhile
		}
		kids = append(kids, kid)
	}
	writeJSON(w, map[string]any{"run": rec, "children": children, "child_runs": kids}, nil)
}

// maxChildSpans is how many of a run's child runs its page draws whole in
// its waterfall.
const maxChildSpans = 20

// config tells the page what it may do.
func (h *Handler) config(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{"labels": h.opts.Labels != nil}, nil)
}

// label writes a label the page sends: {"span": "ptool/0", "label":
// "bad", "note": "…"}.
func (h *Handler) label(w http.ResponseWriter, r *http.Request) {
	if h.opts.Labels == nil {
		http.Error(w, "this dashboard does not write labels (its store is read-only)", http.StatusForbidden)
		return
	}
	var body struct {
		Span  string `json:"span"`
		Label string `json:"label"`
		Note  string `json:"note"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 2*trace.MaxNoteBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		http.Error(w, "a label is a JSON object {span, label, note}: "+err.Error(), http.StatusBadRequest)
		return
	}
	l, err := h.opts.Labels.SetLabel(r.Context(), trace.Label{RunID: r.PathValue("id"), Span: body.Span, Label: body.Label, Note: body.Note})
	switch {
	case errors.Is(err, trace.ErrNotFound):
		http.Error(w, err.Error(), http.StatusNotFound)
	case errors.Is(err, trace.ErrBadLabel):
		http.Error(w, err.Error(), http.StatusBadRequest)
	default:
		writeJSON(w, l, err)
	}
}

func (h *Handler) stats(w http.ResponseWriter, r *http.Request) {
	f, err := filterOf(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	st, err := h.s.Stats(r.Context(), f)
	writeJSON(w, st, err)
}

func (h *Handler) series(w http.ResponseWriter, r *http.Request) {
	f, err := filterOf(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	step, err := time.ParseDuration(r.URL.Query().Get("step"))
	if err != nil {
		step = time.Hour
	}
	b, err := h.s.Series(r.Context(), f, step)
	writeJSON(w, b, err)
}

// live sends the store's Mark now and whenever it changes, until the
// page goes or the dashboard closes.
func (h *Handler) live(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil) // same origin only
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := c.CloseRead(r.Context())
	ch := h.subscribe()
	defer h.unsubscribe(ch)
	for {
		select {
		case m := <-ch:
			b, _ := json.Marshal(m)
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := c.Write(wctx, websocket.MessageText, b)
			cancel()
			if err != nil {
				return
			}
		case <-ctx.Done():
			return
		case <-h.ctx.Done():
			c.Close(websocket.StatusGoingAway, "the dashboard is stopping")
			return
		}
	}
}

// subscribe adds a page to those told of changes; the first one starts
// the poller, which looks at the store once per Poll while pages watch.
func (h *Handler) subscribe() chan trace.Mark {
	ch := make(chan trace.Mark, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clients[ch] = struct{}{}
	if !h.polling {
		h.polling = true
		go h.poll()
	} else if m, err := h.s.Mark(h.ctx); err == nil {
		ch <- m
	}
	return ch
}

func (h *Handler) unsubscribe(ch chan trace.Mark) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.clients, ch)
}

func (h *Handler) poll() {
	t := time.NewTicker(h.opts.Poll)
	defer t.Stop()
	var last trace.Mark
	first := true
	for {
		m, err := h.s.Mark(h.ctx)
		h.mu.Lock()
		if len(h.clients) == 0 {
			h.polling = false
			h.mu.Unlock()
			return
		}
		if err == nil && (first || m != last) {
			for ch := range h.clients {
				select {
				case <-ch: // a page that has not read the last one gets this one
				default:
				}
				ch <- m
			}
			last, first = m, false
		}
		h.mu.Unlock()
		select {
		case <-t.C:
		case <-h.ctx.Done():
			return
		}
	}
}
