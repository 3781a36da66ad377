package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/gateway"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/trace"
	"github.com/ptkit/ptk/trace/otlp"
	"github.com/ptkit/ptk/trace/record"
)

// traceFlags are the flags of the commands that run a model and record
// their runs (run, serve).
type traceFlags struct {
	db           string
	off          bool
	conversation string
	otlp         string // --otlp-endpoint
	otlpContent  bool   // --otlp-content
}

func addTraceFlags(fl *pflag.FlagSet, f *traceFlags, conversation bool) {
	fl.StringVar(&f.db, "trace-db", "", "the trace store: a SQLite file or a postgres:// URL (env PTK_TRACE_DB; default "+defaultTraceDB()+")")
	fl.BoolVar(&f.off, "no-trace", false, "do not record runs in the trace store")
	fl.StringVar(&f.otlp, "otlp-endpoint", "", "also send each run as OpenTelemetry spans over OTLP/HTTP to this URL (http://localhost:4318; env OTEL_EXPORTER_OTLP_ENDPOINT, with OTEL_EXPORTER_OTLP_HEADERS)")
	fl.BoolVar(&f.otlpContent, "otlp-content", false, "send prompts, answers, tool arguments and results in the spans too")
	if conversation {
		fl.StringVar(&f.conversation, "conversation", "", "continue the stored conversation NAME (made when new; 'ptk conversations' lists them)")
	}
}

func defaultTraceDB() string {
	p, err := trace.DefaultPath()
	if err != nil {
		return "~/.local/share/ptk/traces.db"
	}
	return p
}

// traceDB is the store the flags name: --trace-db, else $PTK_TRACE_DB,
// else the default file.
func traceDB(cmd *cobra.Command, flag string) (string, error) {
	if db := setting(cmd, "trace-db", flag, "", "PTK_TRACE_DB"); db != "" {
		return db, nil
	}
	return trace.DefaultPath()
}

// openTraceStore opens the store a command that changes it names (prune,
// rm); failing is a usage error, since the store is all the command uses.
func openTraceStore(cmd *cobra.Command, flag string) (*trace.Store, error) {
	db, err := traceDB(cmd, flag)
	if err != nil {
		return nil, usagef("no trace store: %v; name one with --trace-db or PTK_TRACE_DB", err)
	}
	s, err := trace.Open(cmd.Context(), db)
	if err != nil {
		return nil, usageError{err}
	}
	return s, nil
}

// readTraceStore opens the store a command that only reads it names
// (traces list, show, stats, export; conversations list, show; the
// dashboard) read-only, so that a store on a read-only filesystem can be
// read. A store that does not exist yet is made, empty, as a run would
// make it, and one of an older schema is brought up to date where it can
// be written.
func readTraceStore(cmd *cobra.Command, flag string) (*trace.Store, error) {
	db, err := traceDB(cmd, flag)
	if err != nil {
		return nil, usagef("no trace store: %v; name one with --trace-db or PTK_TRACE_DB", err)
	}
	s, err := trace.OpenReadOnly(cmd.Context(), db)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return openTraceStore(cmd, flag)
	case errors.Is(err, trace.ErrOlderSchema):
		s, werr := trace.Open(cmd.Context(), db)
		if werr == nil {
			return s, nil
		}
		// Say why it could not be upgraded too (read-only, or a failed
		// migration).
		err = fmt.Errorf("%w; upgrading it: %v", err, werr)
	}
	if err != nil {
		return nil, usageError{err}
	}
	return s, nil
}

// recording is what a command that runs a model records into: nil-safe,
// so that a run without a store (--no-trace, or a store that cannot be
// opened) records nothing and carries on.
type recording struct {
	store  *trace.Store
	writer *trace.Writer
	// sink is what runs are recorded into: the writer, and an OTLP
	// exporter's spans with --otlp-endpoint.
	sink record.Sink
	otlp *otlp.Exporter
}

// startRecording opens the trace store for a command that runs a model.
// A store that cannot be opened is said once on stderr and the command
// runs unrecorded; with --conversation, whose messages live in the store,
// it is an error. It sets opts.Store and opts.ConversationID for
// --conversation.
func startRecording(cmd *cobra.Command, f traceFlags, opts *agent.Options) (*recording, error) {
	if f.off && f.conversation == "" {
		return nil, nil
	}
	errOut := cmd.ErrOrStderr()
	db, err := traceDB(cmd, f.db)
	var s *trace.Store
	if err == nil {
		s, err = trace.Open(cmd.Context(), db)
	}
	if err != nil {
		if f.conversation != "" {
			return nil, usagef("--conversation %s needs the trace store: %v", f.conversation, err)
		}
		fmt.Fprintf(errOut, "ptk: not recording runs: %v\n", err)
		return nil, nil
	}
	rec := &recording{store: s}
	if f.conversation != "" && opts != nil {
		opts.Store, opts.ConversationID = s, f.conversation
	}
	if !f.off {
		if err := rec.startWriting(cmd, f, errOut); err != nil {
			rec.close(errOut)
			return nil, err
		}
	}
	return rec, nil
}

// startWriting starts the writer of runs into the store (its losses said
// on errOut) and, with --otlp-endpoint or $OTEL_EXPORTER_OTLP_*, the
// export of their spans.
func (r *recording) startWriting(cmd *cobra.Command, f traceFlags, errOut io.Writer) error {
	r.writer = trace.NewWriter(r.store, errOut)
	r.sink = r.writer
	endpoint := f.otlp
	if endpoint != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
		exp, err := otlp.New(cmd.Context(), otlp.Options{Endpoint: endpoint, Content: f.otlpContent})
		if err != nil {
			return usageError{err}
		}
		r.otlp, r.sink = exp, exp.Sink(r.writer)
	}
	return nil
}

// run returns the observer of one agent run: nil when nothing is recorded.
func (r *recording) run(info trace.Run) func(agent.Event, error) {
	if r == nil || r.sink == nil {
		return nil
	}
	return record.NewAgent(r.sink, info).Event
}

// close writes what is queued (waiting at most a few seconds) and closes
// the store.
func (r *recording) close(errOut io.Writer) {
	if r == nil {
		return
	}
	if r.otlp != nil {
		// after the writer, whose goroutine hands the last runs to it
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := r.otlp.Shutdown(ctx); err != nil {
				fmt.Fprintf(errOut, "ptk: sending spans over OTLP: %v\n", err)
			}
		}()
	}
	if r.writer != nil {
		if err := r.writer.Close(5 * time.Second); err != nil {
			fmt.Fprintf(errOut, "ptk: %v\n", err)
			return // the writer still uses the store
		}
	}
	r.store.Close()
}

// agentRecorder records the run that ptk run starts: the one call run.go
// makes into recording. It returns the observer to give every event to
// (nil-safe) and the function that ends recording.
func agentRecorder(cmd *cobra.Command, f traceFlags, opts *agent.Options, prompt string) (observe func(agent.Event, error), done func(), err error) {
	r, err := startRecording(cmd, f, opts)
	if err != nil {
		return nil, nil, err
	}
	obs := r.run(trace.Run{Name: f.conversation, Model: opts.ModelName, Provider: llm.ProviderOf(opts.Model), Mode: string(opts.Mode), Input: prompt})
	if obs == nil {
		obs = func(agent.Event, error) {}
	}
	return obs, func() { r.close(cmd.ErrOrStderr()) }, nil
}

// serveRecorder records the requests of ptk serve, each as a run of kind
// request with its agent run (the gateway's own tools) under it: the one
// call serve.go makes into recording. A store that cannot be opened is said
// once on stderr and the gateway serves unrecorded. It also returns the
// store (nil without one), which keeps the Responses API's stored
// responses.
func serveRecorder(cmd *cobra.Command, f traceFlags) (observe func() gateway.Observer, store agent.Store, done func()) {
	r, _ := startRecording(cmd, f, nil) // no conversation: its only error
	if r != nil {
		store = r.store
	}
	return r.gatewayObserver(), store, func() { r.close(cmd.ErrOrStderr()) }
}

// gatewayObserver gives the gateway's requests to the trace store: the
// gateway calls it as each request starts. Nil when nothing is recorded,
// so that the gateway does nothing more per request.
func (r *recording) gatewayObserver() func() gateway.Observer {
	if r == nil || r.sink == nil {
		return nil
	}
	return func() gateway.Observer { return requestObserver{record.NewRequest(r.sink)} }
}

// requestObserver records one gateway request.
type requestObserver struct{ rec *record.Request }

var _ gateway.Observer = requestObserver{}

func (o requestObserver) Run(up gateway.Upstream, msgs []ptk.Message) func(agent.Event, error) {
	input := ""
	if n := len(msgs); n > 0 {
		input, _ = trace.Cap(msgs[n-1].Content, trace.MaxResultBytes)
	}
	model, _ := trace.Cap(up.Name, maxModelName)
	return o.rec.Agent(trace.Run{Name: "serve", Model: model, Provider: llm.ProviderOf(up.Model), Mode: string(up.Mode), Input: input}).Event
}

func (o requestObserver) Done(x gateway.Exchange) {
	run := trace.Run{Model: x.Upstream.Name, Provider: x.Provider, Usage: x.Usage}
	if run.Model == "" {
		run.Model = x.Model
	}
	if p, ok := llm.PriceOf(x.Upstream.Model); ok && x.Upstream.Model != nil {
		run.Cost = p.Cost(x.Usage)
	}
	// what the client wrote is capped: a model name of megabytes would
	// otherwise be stored, and sent over OTLP, whole
	asked, _ := trace.Cap(x.Asked, maxModelName)
	model, _ := trace.Cap(x.Model, maxModelName)
	msg, _ := trace.Cap(x.Error, trace.MaxResultBytes)
	run.Model, _ = trace.Cap(run.Model, maxModelName)
	o.rec.End(run, trace.Request{API: x.API, Method: x.Method, Route: x.Route, Status: x.Status, Asked: asked, Model: model,
		Stream: x.Stream, Mode: x.Mode, Calls: x.Calls, Error: msg})
}

// maxModelName caps the model names a gateway request's record keeps.
const maxModelName = 256

// parseSince reads --since: a duration back from now (90m, 1h, 7d) or a
// time (RFC 3339, or a date).
func parseSince(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if n := len(s); n > 1 && s[n-1] == 'd' {
		var days int
		if _, err := fmt.Sscanf(s, "%dd", &days); err == nil {
			return time.Now().Add(-time.Duration(days) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		return time.Now().Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (90m, 1h, 7d) nor a time (2026-01-31, RFC 3339)", s)
}
