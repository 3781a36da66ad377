package gateway

import (
	"net/http"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/llm"
)

// An Observer sees one request of the model APIs (Chat Completions,
// Messages, Responses) from its start to its end: a trace recorder's
// (Config.Observe). Its methods are called on the request's goroutine.
type Observer interface {
	// Run is called as the agent run of a request served with
	// Config.Tools starts, with the upstream that serves it and the
	// request's messages, and returns the function that sees each event
	// of the run (nil: none).
	Run(up Upstream, msgs []ptk.Message) func(agent.Event, error)
	// Done is called as the request ends, its answer written (or the
	// client gone), with what the gateway knows of it.
	Done(Exchange)
}

// Exchange is what the gateway knows of a request as it ends: what its
// log line says, and where it was served.
type Exchange struct {
	// API is "chat", "messages" or "responses"; Method and Route the
	// request's ("POST", "/v1/chat/completions").
	API, Method, Route string
	// Status is the HTTP status the client got: 499 when it went away; a
	// stream that failed after it began keeps its 200, and Error says why.
	Status int
	Error  string
	// Asked is the model the client named; Model the name the gateway
	// served it under (Config.ModelMap, the default), Upstream where.
	Asked, Model string
	Upstream     Upstream
	// Provider is the upstream model's provider, as the GenAI conventions
	// name it (llm.ProviderOf): "" when not known.
	Provider string
	// Served reports that the request reached its model: it was read, its
	// model resolved and a place among the requests served at once taken.
	Served bool
	// Mode says how it was served (ptk, native, native-text, server-tools/…);
	// Stream that the client asked for a stream; Calls counts the calls
	// answered; Usage is the tokens of the whole request.
	Mode   string
	Stream bool
	Calls  int
	Usage  ptk.Usage
}

// exchange is what x says of its request as it ends.
func (x *exchange) exchange(r *http.Request) Exchange {
	e := Exchange{Method: r.Method, Route: r.URL.Path, Status: x.status, Error: x.err, Asked: x.asked, Model: x.name,
		Upstream: x.up, Served: x.up.Model != nil, Mode: x.mode, Stream: x.stream, Calls: x.calls, Usage: x.usage}
	if _, route, ok := strings.Cut(r.Pattern, " "); ok {
		e.Route = route
	}
	switch {
	case strings.HasPrefix(e.Route, "/v1/chat/"):
		e.API = "chat"
	case strings.HasPrefix(e.Route, "/v1/messages"):
		e.API = "messages"
	case strings.HasPrefix(e.Route, "/v1/responses"):
		e.API = "responses"
	}
	if x.up.Model != nil {
		e.Provider = llm.ProviderOf(x.up.Model)
	}
	return e
}
