package gateway

import (
	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm/openai/wire"
)

// The Chat Completions wire types are llm/openai/wire's, shared with the
// client; the names the gateway's code uses for them.
type (
	// chatRequest is what the gateway reads of a Chat Completions request.
	// The body itself is kept: a request that passes through is sent as it
	// came.
	chatRequest   = wire.Request
	streamOptions = wire.StreamOptions
	chatMessage   = wire.Message
	chatToolCall  = wire.ToolCall
	chatTool      = wire.Tool

	// completion is a whole answer (object "chat.completion") or one chunk
	// of a stream ("chat.completion.chunk").
	completion   = wire.Completion
	choice       = wire.Choice
	outMessage   = wire.Reply
	outDelta     = wire.Delta
	outToolCall  = wire.ToolCall
	outText      = wire.Text
	arguments    = wire.Arguments
	usage        = wire.Usage
	tokenDetails = wire.TokenDetails

	// apiError is the body of every error answer, in the OpenAI shape.
	apiError = wire.ErrorBody
)

// contentText is a message's content as text: a string, null, or an array
// of parts whose text parts are joined. A part of another kind (an image,
// audio) is an error: the text protocol carries text only.
func contentText(c *wire.Content) (string, error) { return c.AsText() }

func usageOf(u ptk.Usage) *usage { return wire.UsageOf(u) }
