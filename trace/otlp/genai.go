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

	// gen_ai.provider.name names the provider ("openai", "anthropic",
	// "gcp.gemini", "ollama"; llm.ProviderOf); gen_ai.system is its older
	// name, which backends of the earlier conventions read, written too.
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

	// error.type: why a span failed: a ptk.Code where ptk has one
	// (LLM_CALL_FAILED, INVALID_TOOL_CALL, TOOL_EXECUTION_FAILED), an
	// HTTP status code for a gateway request.
	AttrErrorType = "error.type"
)

// The HTTP conventions' names (stable, semconv v1.26 and later) that a
// gateway request's span writes: it is a SERVER span named
// "{method} {route}", with the request's run under it.
const (
	AttrHTTPMethod = "http.request.method"
	AttrHTTPRoute  = "http.route"
	AttrHTTPStatus = "http.response.status_code"
)

// The values of gen_ai.provider.name (and gen_ai.system) that ptk's
// models name (llm.ProviderOf): the conventions' well-known names where
// they have one, and the plain name of a local server where they have
// none. genai_test.go checks that the clients and the catalog say these.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderGemini    = "gcp.gemini"
	ProviderVertexAI  = "gcp.vertex_ai"
	ProviderBedrock   = "aws.bedrock"
	ProviderAzure     = "azure.ai.openai"
	ProviderMistral   = "mistral_ai"
	ProviderXAI       = "x_ai"
	ProviderDeepSeek  = "deepseek"
	ProviderGroq      = "groq"
	ProviderWatsonx   = "ibm.watsonx.ai"
	ProviderOllama    = "ollama" // not in the conventions' list: a local server
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
	// A step's verdict and note (a distill round's, a candidate's check),
	// and its figures as ptk.step.<name>.
	AttrStepStatus = "ptk.step.status"
	AttrStepNote   = "ptk.step.note"
	AttrStepPrefix = "ptk.step."
	// A gateway request's API (chat, messages, responses), whether the
	// client asked for a stream, and how it was served.
	AttrGatewayAPI    = "ptk.gateway.api"
	AttrGatewayStream = "ptk.gateway.stream"
	AttrGatewayMode   = "ptk.gateway.mode"
)
