package gateway

import (
	"context"
	"net/http"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
	"github.com/ptkit/ptk/tool"
)

// denyAll is the approver of a gateway whose Config has none: a tool that
// is not read-only never runs unattended.
var denyAll = tool.ApproverFunc(func(context.Context, ptk.Call, ptk.ToolInfo) (tool.Verdict, error) {
	return tool.Verdict{Reason: "the gateway is not allowed to run tools that change anything; tell the user what you wanted to do instead"}, nil
})

// serveTools answers a request that declares no tools with the gateway's
// own: the agent loop runs the calls the model makes and feeds the results
// back until the model answers, and the client gets only the answer (a
// stream: the model's reasoning as it comes, then the answer).
func (x *exchange) serveTools(ctx context.Context, w http.ResponseWriter) error {
	x.mode = modeServerTools
	if herr := x.translatable(); herr != nil {
		return herr
	}
	req, herr := x.api.request(x, false)
	if herr != nil {
		return herr
	}
	instructions, msgs, herr := x.api.conversation(x)
	if herr != nil {
		return herr
	}
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != ptk.RoleUser {
		return badRequest("the last message must be the user's")
	}
	opts := agent.Options{
		Model:           x.up.Model,
		ModelName:       x.up.Name,
		Temperature:     req.Temperature,
		MaxOutputTokens: req.MaxTokens,
		StreamModel:     x.stream,
		Instructions:    instructions,
		Tools:           x.s.cfg.Tools,
		Mode:            x.up.Mode,
		MaxIterations:   x.s.cfg.MaxIterations,
		AnswerAtLimit:   true,
		Approver:        x.s.cfg.Approver,
		NativeTools:     x.s.cfg.NativeTools,
	}
	if opts.Approver == nil {
		opts.Approver = denyAll
	}
	out := x.respond(w)
	var res *agent.Result
	var runErr error
	var observe func(agent.Event, error)
	if x.obs != nil {
		observe = x.obs.Run(x.up, msgs)
	}
	for e, err := range agent.Stream(ctx, msgs, opts) {
		if observe != nil {
			observe(e, err)
		}
		switch e.Kind {
		case agent.EventReasoning:
			if out.streaming() {
				out.addReasoning(e.Text)
				out.flush()
			}
		case agent.EventDone:
			res, runErr = e.Run, err
		}
	}
	if res != nil {
		x.usage, x.calls = res.Usage, res.TotalToolCalls
		x.mode += "/" + string(res.Mode)
	}
	if runErr != nil {
		return runErr
	}
	out.addText(res.Content)
	out.finish("stop", res.Usage)
	x.calls = res.TotalToolCalls
	return nil
}
