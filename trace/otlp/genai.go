package otlp

// The names of the OpenTelemetry GenAI semantic conventions that ptk
// writes, pinned here in one place: the conventions left the core semconv
// packages for their own repository
// (github.com/open-telemetry/semantic-conventions-genai) and have no
// release yet, so no Go package holds them. These are the names of the
// conventions' current draft; when they are released, this file is what
// changes.
const (
	// gen_ai.operation.name: what a span does.
	AttrOperation = "gen_ai.operation.name"
	// The operations ptk's spans are.
	OpChat        = "chat"         // a model call
	OpExecuteTool = "execute_tool" // a tool call, or a ptool call
	OpInvokeAgent = "invoke_agent" // a run: an agent, a ReAct run, a workflow

	// gen_ai.system names the provider ("openai", "anthropic", "ollama");
	// gen_ai.provider.name is its newer name, written too.
	AttrSystem   = "gen_ai.system"
	AttrProvider = "gen_ai.provider.name"

	AttrRequestModel  = "gen_ai.request.model"
	AttrResponseModel = "gen_ai.response.model"

	AttrInputTokens  = "gen_ai.usage.input_tokens"
	AttrOutputTokens = "gen_ai.usage.output_tokens"

	AttrToolName   = "gen_ai.tool.name"
	AttrToolCallID = "gen_ai.tool.call.id"
	AttrAgentName  = "gen_ai.agent.name"
	AttrAgentID    = "gen_ai.agent.id"

	// Content, written only when asked (Options.Content), as the
	// conventions say: prompts and answers may hold what must not leave.
	AttrInputMessages     = "gen_ai.input.messages"
	AttrOutputMessages    = "gen_ai.output.messages"
	AttrToolCallArguments = "gen_ai.tool.call.arguments"
	AttrToolCallResult    = "gen_ai.tool.call.result"

	// error.type: why a span failed.
	AttrErrorType = "error.type"
)

// ptk's own attributes, beside the conventions'.
const (
	AttrRunKind   = "ptk.run.kind"
	AttrRunID     = "ptk.run.id"
	AttrSpanID    = "ptk.span"
	AttrCost      = "ptk.cost_usd"
	AttrMode      = "ptk.mode"
	AttrOutcome   = "ptk.tool.outcome"
	AttrPtool     = "ptk.ptool"
	AttrPtoolFrom = "ptk.ptool.source"
)
