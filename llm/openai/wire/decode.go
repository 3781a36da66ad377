package wire

import (
	"encoding/json"
	"strings"

	"github.com/ptkit/ptk/internal/jsonfast"
)

// A request through the gateway is decoded once on its way in, and each of
// the dozens of chunks of a streamed answer on its way back: encoding/json
// reads each twice (once to check it, once to decode it) through
// reflection, which was the largest cost of a request through the gateway.
// UnmarshalRequest and UnmarshalCompletion read them in one pass, and leave
// whatever they do not read exactly as encoding/json would to
// encoding/json; a fuzz test holds the two to the same result.

// UnmarshalRequest reads data into r as json.Unmarshal(data, r) does, in
// one pass. The json.RawMessage fields of r (stop, tool_choice, the tools'
// parameters) are slices of data, which must not change after.
func UnmarshalRequest(data []byte, r *Request) error {
	return jsonfast.Unmarshal(data, r, func(data []byte, r *Request) bool { return decodeRequest(data, r, nil) })
}

// UnmarshalRequestOthers reads data into r as UnmarshalRequest does and,
// when it reads it in one pass (read true), gives other the key and the
// value's text (slices of data) of each member that names no field of
// Request, in order: the fields a server passes on as they came. When read
// is false the request was left to encoding/json, and other may have been
// given some of its members before: the caller finds them itself.
func UnmarshalRequestOthers(data []byte, r *Request, other func(key, value []byte)) (read bool, err error) {
	err = jsonfast.Unmarshal(data, r, func(data []byte, r *Request) bool {
		read = decodeRequest(data, r, other)
		return read
	})
	return read, err
}

// UnmarshalCompletion reads data, a whole answer or a stream chunk, into c
// as json.Unmarshal(data, c) does, in one pass. The json.RawMessage fields
// of c are slices of data, which must not change after.
func UnmarshalCompletion(data []byte, c *Completion) error {
	return jsonfast.Unmarshal(data, c, func(data []byte, c *Completion) bool { return decodeCompletion(data, c, nil) })
}

// ChunkReader reads the chunks of one stream, one after another, as
// UnmarshalCompletion reads them, reusing memory from one to the next: the
// chunk, its first choice and delta, and the strings a chunk repeats from
// the one before (id, object, model, role, finish reason). A stream's
// chunks differ in a few bytes of text, and reading each afresh cost six
// allocations beside the text's. The zero value is ready to use.
type ChunkReader struct {
	c   Completion
	mem chunkMemory
}

// chunkMemory is what a ChunkReader reuses.
type chunkMemory struct {
	choice                          [1]Choice
	delta                           Delta
	finish                          string
	calls                           [2]ToolCall // a delta's first calls (fastChunk)
	index                           [2]int      // and their indexes
	before, after                   region      // the last chunk's bytes around its choices (fastChunk)
	id, object, model, role, reason string      // the last chunk's
}

// Read reads data, one chunk. The chunk it returns, and its json.RawMessage
// fields (slices of data), are valid until the next Read.
func (r *ChunkReader) Read(data []byte) (*Completion, error) {
	m := &r.mem
	m.id, m.object, m.model = r.c.ID, r.c.Object, r.c.Model
	m.role, m.reason = m.delta.Role, m.finish
	r.c = Completion{}
	if fastChunk(data, &r.c, m) {
		return &r.c, nil
	}
	r.c = Completion{}
	if decodeCompletion(data, &r.c, m) {
		return &r.c, nil
	}
	r.c = Completion{}
	if err := json.Unmarshal(data, &r.c); err != nil {
		return nil, err
	}
	return &r.c, nil
}

var requestFields = jsonfast.NewFields("model", "messages", "temperature", "max_tokens", "stop", "tools",
	"tool_choice", "stream", "stream_options", "parallel_tool_calls", "max_completion_tokens", "n")

// decodeRequest reads a request; false leaves it to encoding/json.
func decodeRequest(data []byte, r *Request, other func(key, value []byte)) bool {
	d := jsonfast.NewReader(data)
	return d.StructOther(requestFields, func(i int) bool {
		switch i {
		case 0:
			return d.StringField(&r.Model)
		case 1:
			return jsonfast.Slice(&d, &r.Messages, readMessage)
		case 2:
			return d.FloatPtr(&r.Temperature)
		case 3:
			return d.IntPtr(&r.MaxTokens)
		case 4:
			return d.RawField(&r.Stop)
		case 5:
			return toolsMemo.Read(&d, &r.Tools, readTools, cloneTools)
		case 6:
			return d.RawField(&r.ToolChoice)
		case 7:
			return d.BoolField(&r.Stream)
		case 8:
			return jsonfast.Ptr(&d, &r.StreamOptions, readStreamOptions)
		case 9:
			return d.BoolPtr(&r.ParallelToolCalls)
		case 10:
			return d.IntPtr(&r.MaxCompletionTokens)
		default:
			return d.IntPtr(&r.N)
		}
	}, other) && d.End()
}

var (
	streamOptionsFields = jsonfast.NewFields("include_usage")
	messageFields       = jsonfast.NewFields("role", "content", "name", "tool_calls", "tool_call_id")
	partFields          = jsonfast.NewFields("type", "text")
	toolCallFields      = jsonfast.NewFields("index", "id", "type", "function")
	functionCallFields  = jsonfast.NewFields("name", "arguments")
	toolFields          = jsonfast.NewFields("type", "function")
	functionFields      = jsonfast.NewFields("name", "description", "parameters", "strict")
)

func readStreamOptions(d *jsonfast.Reader, o *StreamOptions) bool {
	return d.Struct(streamOptionsFields, func(int) bool { return d.BoolField(&o.IncludeUsage) })
}

func readMessage(d *jsonfast.Reader, m *Message) bool {
	return d.Struct(messageFields, func(i int) bool {
		switch i {
		case 0:
			return d.StringField(&m.Role)
		case 1:
			return jsonfast.Ptr(d, &m.Content, readContent)
		case 2:
			return d.StringField(&m.Name)
		case 3:
			return jsonfast.Slice(d, &m.ToolCalls, readToolCall)
		default:
			return d.StringField(&m.ToolCallID)
		}
	})
}

// readContent reads a message's content as Content.UnmarshalJSON does: a
// string or an array of parts. Any other value, which it keeps as an error
// for AsText, is left to encoding/json.
func readContent(d *jsonfast.Reader, c *Content) bool {
	if d.Peek() == '"' {
		return jsonfast.MemoString(textMemo, d, &c.Text)
	}
	return jsonfast.StringOrSlice(d, &c.Text, &c.Parts, readPart)
}

// textMemo keeps the long texts of the requests read lately: a client
// sends its system prompt, and the conversation so far, with every call.
var textMemo = jsonfast.NewMemo[string](4 << 20)

func readPart(d *jsonfast.Reader, p *ContentPart) bool {
	return d.Struct(partFields, func(i int) bool {
		if i == 0 {
			return d.StringField(&p.Type)
		}
		return d.StringField(&p.Text)
	})
}

func readToolCall(d *jsonfast.Reader, tc *ToolCall) bool {
	return d.Struct(toolCallFields, func(i int) bool {
		switch i {
		case 0:
			return d.IntPtr(&tc.Index)
		case 1:
			return d.StringField(&tc.ID)
		case 2:
			return d.StringField(&tc.Type)
		default:
			if d.Null() {
				return true
			}
			return d.Struct(functionCallFields, func(i int) bool {
				if i == 0 {
					return d.StringField(&tc.Function.Name)
				}
				return readArguments(d, &tc.Function.Arguments)
			})
		}
	})
}

// readArguments reads a call's arguments as Arguments.UnmarshalJSON does:
// a string's text, or any other value as it is written.
func readArguments(d *jsonfast.Reader, a *Arguments) bool {
	switch d.Peek() {
	case '"':
		var s string
		if !d.String(&s) {
			return false
		}
		*a = Arguments(s)
		return true
	case 'n':
		if d.Null() {
			return true
		}
	}
	raw, ok := d.Raw()
	*a = Arguments(raw)
	return ok
}

// toolsMemo keeps the tools of the requests read lately: a client sends
// the same ones, byte for byte, on every request.
var toolsMemo = jsonfast.NewMemo[[]Tool](4 << 20)

func readTools(d *jsonfast.Reader, ts *[]Tool) bool { return jsonfast.Slice(d, ts, readTool) }

// cloneTools copies tools read from the text from as if read from to.
func cloneTools(tools []Tool, from, to []byte) []Tool {
	return jsonfast.RebaseEach(tools, func(t *Tool) {
		f := &t.Function
		f.Parameters = jsonfast.Rebase(f.Parameters, from, to)
		if f.Strict != nil {
			f.Strict = new(*f.Strict)
		}
	})
}

func readTool(d *jsonfast.Reader, t *Tool) bool {
	return d.Struct(toolFields, func(i int) bool {
		if i == 0 {
			return d.StringField(&t.Type)
		}
		if d.Null() {
			return true
		}
		f := &t.Function
		return d.Struct(functionFields, func(i int) bool {
			switch i {
			case 0:
				return d.StringField(&f.Name)
			case 1:
				return d.StringField(&f.Description)
			case 2:
				return d.RawField(&f.Parameters)
			default:
				return d.BoolPtr(&f.Strict)
			}
		})
	})
}

var (
	completionFields   = jsonfast.NewFields("id", "object", "created", "model", "choices", "usage", "error")
	choiceFields       = jsonfast.NewFields("index", "message", "delta", "finish_reason", "logprobs")
	replyFields        = jsonfast.NewFields("role", "content", "reasoning_content", "reasoning", "tool_calls", "refusal")
	deltaFields        = jsonfast.NewFields("role", "content", "reasoning_content", "reasoning", "tool_calls")
	usageFields        = jsonfast.NewFields("prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "prompt_cache_hit_tokens")
	tokenDetailsFields = jsonfast.NewFields("cached_tokens")
)

// decodeCompletion reads a whole answer or a chunk, with mem (nil: none)
// to reuse; false leaves it to encoding/json.
func decodeCompletion(data []byte, c *Completion, mem *chunkMemory) bool {
	d := jsonfast.NewReader(data)
	var m chunkMemory // no strings to reuse
	if mem != nil {
		m = chunkMemory{id: mem.id, object: mem.object, model: mem.model}
	}
	return d.Struct(completionFields, func(i int) bool {
		switch i {
		case 0:
			return d.Null() || d.StringLike(&c.ID, m.id)
		case 1:
			return d.Null() || d.StringLike(&c.Object, m.object)
		case 2:
			return d.Null() || d.Int64(&c.Created)
		case 3:
			return d.Null() || d.StringLike(&c.Model, m.model)
		case 4:
			if mem == nil || d.Null() {
				return jsonfast.Slice(&d, &c.Choices, readChoice)
			}
			// The first choice in mem's memory, any other in its own.
			c.Choices = mem.choice[:0]
			return d.Array(func() bool {
				c.Choices = append(c.Choices, Choice{})
				if d.Null() {
					return true
				}
				if len(c.Choices) == 1 {
					return readFirstChoice(&d, &c.Choices[0], mem)
				}
				return readChoice(&d, &c.Choices[len(c.Choices)-1])
			})
		case 5:
			return jsonfast.Ptr(&d, &c.Usage, readUsage)
		default:
			return d.RawField(&c.Error)
		}
	}) && d.End()
}

// readFirstChoice reads a stream's first choice, its delta and finish
// reason in mem's memory.
func readFirstChoice(d *jsonfast.Reader, ch *Choice, mem *chunkMemory) bool {
	return d.Struct(choiceFields, func(i int) bool {
		switch i {
		case 2:
			if d.Null() {
				ch.Delta = nil
				return true
			}
			mem.delta = Delta{}
			ch.Delta = &mem.delta
			return readDeltaLike(d, ch.Delta, mem.role)
		case 3:
			if d.Null() {
				ch.FinishReason = nil
				return true
			}
			ch.FinishReason = &mem.finish
			return d.StringLike(&mem.finish, mem.reason)
		}
		return readChoiceField(d, ch, i)
	})
}

func readChoice(d *jsonfast.Reader, ch *Choice) bool {
	return d.Struct(choiceFields, func(i int) bool { return readChoiceField(d, ch, i) })
}

// readChoiceField reads the choice's field i.
func readChoiceField(d *jsonfast.Reader, ch *Choice, i int) bool {
	switch i {
	case 0:
		return d.Null() || d.Int(&ch.Index)
	case 1:
		return jsonfast.Ptr(d, &ch.Message, readReply)
	case 2:
		return jsonfast.Ptr(d, &ch.Delta, readDelta)
	case 3:
		return d.StringPtr(&ch.FinishReason)
	default:
		return jsonfast.Ptr(d, &ch.Logprobs, (*jsonfast.Reader).RawField)
	}
}

func readReply(d *jsonfast.Reader, m *Reply) bool {
	return d.Struct(replyFields, func(i int) bool {
		switch i {
		case 0:
			return d.StringField(&m.Role)
		case 1:
			return jsonfast.Ptr(d, &m.Content, readText)
		case 2:
			return readText(d, &m.ReasoningContent)
		case 3:
			return readText(d, &m.Reasoning)
		case 4:
			return jsonfast.Slice(d, &m.ToolCalls, readToolCall)
		default:
			return d.StringPtr(&m.Refusal)
		}
	})
}

func readDelta(d *jsonfast.Reader, m *Delta) bool { return readDeltaLike(d, m, "") }

// readDeltaLike reads a delta, reusing role for its role when it is the
// same.
func readDeltaLike(d *jsonfast.Reader, m *Delta, role string) bool {
	return d.Struct(deltaFields, func(i int) bool {
		switch i {
		case 0:
			return d.Null() || d.StringLike(&m.Role, role)
		case 1:
			return readText(d, &m.Content)
		case 2:
			return readText(d, &m.ReasoningContent)
		case 3:
			return readText(d, &m.Reasoning)
		default:
			return jsonfast.Slice(d, &m.ToolCalls, readToolCall)
		}
	})
}

// readText reads an answer's text as Text.UnmarshalJSON does: a string, the
// text parts of an array joined, and no text from any other value.
func readText(d *jsonfast.Reader, t *Text) bool {
	switch d.Peek() {
	case '"':
		var s string
		if !d.String(&s) {
			return false
		}
		*t = Text(s)
		return true
	case '[':
		var parts []ContentPart
		if !jsonfast.Slice(d, &parts, readPart) {
			return false
		}
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		*t = Text(b.String())
		return true
	}
	return d.Skip()
}

func readUsage(d *jsonfast.Reader, u *Usage) bool {
	return d.Struct(usageFields, func(i int) bool {
		switch i {
		case 0:
			return d.IntField(&u.PromptTokens)
		case 1:
			return d.IntField(&u.CompletionTokens)
		case 2:
			return d.IntField(&u.TotalTokens)
		case 3:
			return jsonfast.Ptr(d, &u.PromptTokensDetails, func(d *jsonfast.Reader, t *TokenDetails) bool {
				return d.Struct(tokenDetailsFields, func(int) bool { return d.IntField(&t.CachedTokens) })
			})
		default:
			return d.IntField(&u.PromptCacheHitTokens)
		}
	})
}
