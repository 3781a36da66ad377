// Package llm is how ptk talks to language models: the [Model] interface (one
// call), the optional [Streamer] interface (one call, streamed), the request
// and response types they share, and the errors a provider reports, classified
// so that callers can decide what to do ([ErrToolsUnsupported],
// [ErrRateLimited]...).
//
// A provider is a thin translator between these types and its wire format;
// it never loops, runs tools or parses the text protocol. Sub-packages hold the
// providers: llm/openai speaks the Chat Completions API (OpenAI, Ollama, vLLM,
// llama.cpp's server, Groq, Together, OpenRouter, DeepSeek), llm/ollama
// Ollama's native API (which takes the context size per request),
// llm/anthropic the Messages API, llm/gemini Google's generateContent, and
// llm/completion the text-only endpoints. llm/catalog names models and prices them; llm/replay
// records and replays calls. Priced and Fallback wrap a model.
//
// What a model can do beyond Generate is a small interface of its own
// (Streamer, ToolSupporter, BaseURLer, Pricer, TextCompleter, Windower:
// its context window, ContextWindowOf), and a model
// that wraps another implements Unwrap, so that [As], [PriceOf] and
// [BaseURLOf] find a capability through any chain of wrappers instead of
// each wrapper forwarding it by hand.
package llm

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/ptkit/ptk"
)

// Model is a language model that answers one request at a time. A configured
// Model is safe for concurrent use.
type Model interface {
	Generate(ctx context.Context, req Request) (*Response, error)
}

// Streamer is a Model that can also stream its answer. Ranging over the
// sequence reads the chunks as they arrive; breaking out of the loop, or
// canceling ctx, closes the stream at once. An error ends the sequence.
type Streamer interface {
	Model
	Stream(ctx context.Context, req Request) iter.Seq2[Chunk, error]
}

// Request is one call to a model.
type Request struct {
	// Model names the model at the provider ("gpt-4o-mini", "qwen3:8b").
	// Empty lets the provider choose its default, where it has one.
	Model string
	// Messages is the conversation so far. The first one may be the system
	// prompt.
	Messages []ptk.Message
	// Prompt is the conversation already flattened into one prompt by the
	// caller's formatter, for a text-only model (a TextCompleter); chat
	// models ignore it. A TextCompleter given no Prompt flattens Messages
	// itself.
	Prompt string
	// Tools are sent as the provider's native function definitions. Leave
	// empty for a model that is taught the text protocol instead.
	Tools []ptk.ToolInfo
	// ToolChoice is "auto" (or empty), "none", "required", or the name of
	// one tool the model must call. Used only with Tools.
	ToolChoice string
	// Temperature, when not nil, sets the sampling temperature.
	Temperature *float64
	// MaxTokens, when above zero, caps the tokens the model writes.
	MaxTokens int
	// Stop lists sequences at which the model stops writing.
	Stop []string
	// Extra are more fields of the request body, sent as they are by the
	// providers whose wire format they belong to (llm/openai adds them to
	// the Chat Completions body: "seed", "top_p", "response_format"...);
	// a field the provider sets itself is not replaced. Others ignore them.
	Extra map[string]json.RawMessage
	// ResponseSchema, when set, asks for an answer that is JSON fitting this
	// JSON Schema, where the provider's API has a field that says so:
	// llm/gemini sends it as generationConfig's responseJsonSchema (or
	// responseSchema, converted, WithOpenAPISchema) with responseMimeType
	// application/json. Others ignore it (for Chat Completions, put
	// "response_format" in Extra).
	ResponseSchema json.RawMessage
}

// Response is a model's whole answer.
type Response struct {
	// Content is the text the model wrote (without its reasoning, when the
	// provider returns reasoning separately).
	Content string
	// Reasoning is the reasoning the provider returned apart from the text
	// (DeepSeek's and vLLM's reasoning_content, Ollama's thinking), if any.
	Reasoning string
	// Calls are the native tool calls, in order. Args are the arguments as
	// the model wrote them: usually JSON, not guaranteed valid.
	Calls []ptk.Call
	// Usage is the token count the provider reported (zero when it reported
	// none).
	Usage ptk.Usage
	// FinishReason is the provider's reason for stopping ("stop", "length",
	// "tool_calls"...), as it wrote it.
	FinishReason string
	// Model is the model that answered, as the provider names it.
	Model string
	// Cost is what the call cost in US dollars, when the model knows its
	// price (see Priced); 0 otherwise.
	Cost float64
}

// Chunk is one piece of a streamed answer. Any of its fields may be set.
type Chunk struct {
	// Text is the next piece of the text.
	Text string
	// Reasoning is the next piece of separately returned reasoning.
	Reasoning string
	// Call is the next piece of a native tool call, if any.
	Call *CallDelta
	// Usage, when not nil, is the usage of the whole call (sent once, usually
	// last).
	Usage *ptk.Usage
	// FinishReason is set on the chunk that ends the answer.
	FinishReason string
	// Model is the model that answers, when the provider says.
	Model string
	// Cost is what the call cost in US dollars, on the chunk that carries
	// Usage, when the model knows its price (see Priced).
	Cost float64
	// More reports that the next chunk, or the end of the answer, has
	// arrived already (it came in the same read from the network): a
	// consumer that passes chunks on in
	// batches sends its batch at the first chunk without More, and so never
	// waits for the network with a batch unsent. False promises nothing:
	// a client that cannot tell leaves it false, and every chunk ends a
	// batch.
	More bool
}

// CallDelta is a piece of a native tool call in a stream. The first piece of
// a call carries its ID and Tool; later pieces carry only Index and the next
// fragment of ArgsDelta.
type CallDelta struct {
	// Index is the call's position in the answer, from 0.
	Index int
	ID    string
	Tool  string
	// ArgsDelta is the next fragment of the arguments' JSON text.
	ArgsDelta string
}

// ToolSupporter is a Model that knows whether it takes native tool
// definitions. A model that does not (a completion-only endpoint, a model
// the catalog marks "ptk") is taught the text protocol by an agent in auto
// mode from its first call.
type ToolSupporter interface {
	SupportsNativeTools() bool
}

// TextCompleter is a Model that continues one flattened prompt instead of
// taking chat messages (llm/completion's models): it reads Request.Prompt,
// which a caller sets with its own formatter when As finds this capability,
// and flattens Request.Messages itself when Prompt is empty.
type TextCompleter interface {
	Model
	// CompletesText marks the capability; it does nothing.
	CompletesText()
}
