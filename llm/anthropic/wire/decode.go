package wire

import "github.com/ptkit/ptk/internal/jsonfast"

// UnmarshalRequest reads data into r as json.Unmarshal(data, r) does, in
// one pass: a request through the gateway is read once, and encoding/json
// reads it twice (once to check it, once to decode it) through reflection,
// the largest cost of a request through the gateway. Whatever the one-pass
// decoder does not read exactly as encoding/json would is left to
// encoding/json; a fuzz test holds the two to the same result. The
// json.RawMessage fields of r (schemas, inputs, cache_control, metadata)
// are slices of data, which must not change after.
func UnmarshalRequest(data []byte, r *Request) error {
	return jsonfast.Unmarshal(data, r, decodeRequest)
}

var (
	requestFields = jsonfast.NewFields("model", "max_tokens", "system", "messages", "tools", "tool_choice",
		"temperature", "top_p", "top_k", "stop_sequences", "stream", "metadata", "thinking")
	messageFields = jsonfast.NewFields("role", "content")
	blockFields   = jsonfast.NewFields("type", "text", "thinking", "signature", "data", "id", "name", "input",
		"tool_use_id", "content", "is_error", "source", "tool_name", "cache_control")
	toolFields       = jsonfast.NewFields("type", "name", "description", "input_schema", "defer_loading", "cache_control")
	toolChoiceFields = jsonfast.NewFields("type", "name", "disable_parallel_tool_use")
	thinkingFields   = jsonfast.NewFields("type", "budget_tokens", "display")
)

// decodeRequest reads a request; false leaves it to encoding/json.
func decodeRequest(data []byte, r *Request) bool {
	d := jsonfast.NewReader(data)
	return d.Struct(requestFields, func(i int) bool {
		switch i {
		case 0:
			return d.StringField(&r.Model)
		case 1:
			return d.IntField(&r.MaxTokens)
		case 2:
			return jsonfast.Ptr(&d, &r.System, readContent)
		case 3:
			return jsonfast.Slice(&d, &r.Messages, readMessage)
		case 4:
			return toolsMemo.Read(&d, &r.Tools, readTools, cloneTools)
		case 5:
			return jsonfast.Ptr(&d, &r.ToolChoice, readToolChoice)
		case 6:
			return d.FloatPtr(&r.Temperature)
		case 7:
			return d.FloatPtr(&r.TopP)
		case 8:
			return d.IntPtr(&r.TopK)
		case 9:
			return jsonfast.Slice(&d, &r.StopSequences, (*jsonfast.Reader).String)
		case 10:
			return d.BoolField(&r.Stream)
		case 11:
			return d.RawField(&r.Metadata)
		default:
			return jsonfast.Ptr(&d, &r.Thinking, readThinking)
		}
	}) && d.End()
}

func readMessage(d *jsonfast.Reader, m *Message) bool {
	return d.Struct(messageFields, func(i int) bool {
		if i == 0 {
			return d.StringField(&m.Role)
		}
		if d.Null() { // Content.UnmarshalJSON("null") leaves no content
			m.Content = Content{}
			return true
		}
		return readContent(d, &m.Content)
	})
}

// readContent reads content as Content.UnmarshalJSON does: a string or an
// array of blocks (anything else is its error, left to encoding/json).
func readContent(d *jsonfast.Reader, c *Content) bool {
	if d.Peek() == '"' {
		return jsonfast.MemoString(textMemo, d, &c.Text)
	}
	return jsonfast.StringOrSlice(d, &c.Text, &c.Blocks, readBlock)
}

// textMemo keeps the long texts of the requests read lately: a client
// (Claude Code) sends its system prompt, and the conversation so far,
// with every call.
var textMemo = jsonfast.NewMemo[string](4 << 20)

// textField reads a string field that may be long (a turn's text, its
// thinking and signature) through textMemo.
func textField(d *jsonfast.Reader, s *string) bool {
	return d.Null() || jsonfast.MemoString(textMemo, d, s)
}

func readBlock(d *jsonfast.Reader, b *Block) bool {
	return d.Struct(blockFields, func(i int) bool {
		switch i {
		case 0:
			return d.StringField(&b.Type)
		case 1:
			return textField(d, &b.Text)
		case 2:
			return textField(d, &b.Thinking)
		case 3:
			return textField(d, &b.Signature)
		case 4:
			return textField(d, &b.Data)
		case 5:
			return d.StringField(&b.ID)
		case 6:
			return d.StringField(&b.Name)
		case 7:
			return d.RawField(&b.Input)
		case 8:
			return d.StringField(&b.ToolUseID)
		case 9:
			return jsonfast.Ptr(d, &b.Content, readContent)
		case 10:
			return d.BoolField(&b.IsError)
		case 11:
			return d.RawField(&b.Source)
		case 12:
			return d.StringField(&b.ToolName)
		default:
			return d.RawField(&b.CacheControl)
		}
	})
}

// toolsMemo keeps the tools of the requests read lately: a client (Claude
// Code) sends the same ones, byte for byte, on every request.
var toolsMemo = jsonfast.NewMemo[[]Tool](4 << 20)

func readTools(d *jsonfast.Reader, ts *[]Tool) bool { return jsonfast.Slice(d, ts, readTool) }

// cloneTools copies tools read from the text from as if read from to.
func cloneTools(tools []Tool, from, to []byte) []Tool {
	return jsonfast.RebaseEach(tools, func(t *Tool) {
		t.InputSchema = jsonfast.Rebase(t.InputSchema, from, to)
		t.CacheControl = jsonfast.Rebase(t.CacheControl, from, to)
	})
}

func readTool(d *jsonfast.Reader, t *Tool) bool {
	return d.Struct(toolFields, func(i int) bool {
		switch i {
		case 0:
			return d.StringField(&t.Type)
		case 1:
			return d.StringField(&t.Name)
		case 2:
			return d.StringField(&t.Description)
		case 3:
			return d.RawField(&t.InputSchema)
		case 4:
			return d.BoolField(&t.DeferLoading)
		default:
			return d.RawField(&t.CacheControl)
		}
	})
}

func readToolChoice(d *jsonfast.Reader, c *ToolChoice) bool {
	return d.Struct(toolChoiceFields, func(i int) bool {
		switch i {
		case 0:
			return d.StringField(&c.Type)
		case 1:
			return d.StringField(&c.Name)
		default:
			return d.BoolField(&c.DisableParallelToolUse)
		}
	})
}

func readThinking(d *jsonfast.Reader, t *Thinking) bool {
	return d.Struct(thinkingFields, func(i int) bool {
		switch i {
		case 0:
			return d.StringField(&t.Type)
		case 1:
			return d.IntField(&t.BudgetTokens)
		default:
			return d.StringField(&t.Display)
		}
	})
}
