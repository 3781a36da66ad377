package responses

import (
	"encoding/json"

	"github.com/ptkit/ptk/internal/jsonfast"
)

// UnmarshalRequest reads data into r as json.Unmarshal(data, r) does, in
// one pass: a request through the gateway is read once, and encoding/json
// reads it twice (once to check it, once to decode it) through reflection,
// the largest cost of a request through the gateway. Whatever the one-pass
// decoder does not read exactly as encoding/json would is left to
// encoding/json; a fuzz test holds the two to the same result. The
// json.RawMessage fields of r (tool_choice, parameters, reasoning,
// metadata, text.format) are slices of data, which must not change after.
func UnmarshalRequest(data []byte, r *Request) error {
	return jsonfast.Unmarshal(data, r, decodeRequest)
}

var (
	requestFields = jsonfast.NewFields("model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
		"max_output_tokens", "temperature", "top_p", "stream", "store", "previous_response_id", "reasoning", "include",
		"prompt_cache_key", "metadata", "text")
	itemFields = jsonfast.NewFields("type", "id", "status", "role", "content", "call_id", "name", "namespace",
		"arguments", "output", "summary", "encrypted_content", "input")
	partFields = jsonfast.NewFields("type", "text", "refusal", "image_url", "file_id", "filename", "annotations")
	toolFields = jsonfast.NewFields("type", "name", "description", "parameters", "strict", "tools")
	textFields = jsonfast.NewFields("format")
)

// decodeRequest reads a request; false leaves it to encoding/json.
func decodeRequest(data []byte, r *Request) bool {
	d := jsonfast.NewReader(data)
	return d.Struct(requestFields, func(i int) bool {
		switch i {
		case 0:
			return d.StringField(&r.Model)
		case 1:
			return readInput(&d, &r.Input)
		case 2:
			return textField(&d, &r.Instructions)
		case 3:
			return toolsMemo.Read(&d, &r.Tools, readTools, cloneTools)
		case 4:
			return d.RawField(&r.ToolChoice)
		case 5:
			return d.BoolPtr(&r.ParallelToolCalls)
		case 6:
			return d.IntPtr(&r.MaxOutputTokens)
		case 7:
			return d.FloatPtr(&r.Temperature)
		case 8:
			return d.FloatPtr(&r.TopP)
		case 9:
			return d.BoolField(&r.Stream)
		case 10:
			return d.BoolPtr(&r.Store)
		case 11:
			return d.StringField(&r.PreviousResponseID)
		case 12:
			return d.RawField(&r.Reasoning)
		case 13:
			return jsonfast.Slice(&d, &r.Include, (*jsonfast.Reader).String)
		case 14:
			return d.StringField(&r.PromptCacheKey)
		case 15:
			return d.RawField(&r.Metadata)
		default:
			return jsonfast.Ptr(&d, &r.Text, func(d *jsonfast.Reader, t *TextConfig) bool {
				return d.Struct(textFields, func(int) bool { return d.RawField(&t.Format) })
			})
		}
	}) && d.End()
}

// readInput reads the input as Input.UnmarshalJSON does: a string or an
// array of items, null as none (anything else is its error, left to
// encoding/json).
func readInput(d *jsonfast.Reader, in *Input) bool {
	if d.Null() {
		*in = Input{}
		return true
	}
	return jsonfast.StringOrSlice(d, &in.Text, &in.Items, readItem)
}

func readItem(d *jsonfast.Reader, it *Item) bool {
	return d.Struct(itemFields, func(i int) bool {
		switch i {
		case 0:
			return d.StringField(&it.Type)
		case 1:
			return d.StringField(&it.ID)
		case 2:
			return d.StringField(&it.Status)
		case 3:
			return d.StringField(&it.Role)
		case 4:
			return jsonfast.Ptr(d, &it.Content, readContent)
		case 5:
			return d.StringField(&it.CallID)
		case 6:
			return d.StringField(&it.Name)
		case 7:
			return d.StringField(&it.Namespace)
		case 8:
			return textField(d, &it.Arguments)
		case 9:
			return jsonfast.Ptr(d, &it.Output, readContent)
		case 10:
			return jsonfast.Slice(d, &it.Summary, readPart)
		case 11:
			return textField(d, &it.EncryptedContent)
		default:
			return d.StringField(&it.Input)
		}
	})
}

// readContent reads content as Content.UnmarshalJSON does: a string or an
// array of parts (anything else is its error, left to encoding/json).
func readContent(d *jsonfast.Reader, c *Content) bool {
	if d.Peek() == '"' {
		return jsonfast.MemoString(textMemo, d, &c.Text)
	}
	return jsonfast.StringOrSlice(d, &c.Text, &c.Parts, readPart)
}

// textField reads a string field that may be long (a turn's text, a
// call's arguments) through textMemo.
func textField(d *jsonfast.Reader, s *string) bool {
	return d.Null() || jsonfast.MemoString(textMemo, d, s)
}

func readPart(d *jsonfast.Reader, p *Part) bool {
	return d.Struct(partFields, func(i int) bool {
		switch i {
		case 0:
			return d.StringField(&p.Type)
		case 1:
			return textField(d, &p.Text)
		case 2:
			return d.StringField(&p.Refusal)
		case 3:
			return d.StringField(&p.ImageURL)
		case 4:
			return d.StringField(&p.FileID)
		case 5:
			return d.StringField(&p.Filename)
		default:
			return jsonfast.Ptr(d, &p.Annotations, func(d *jsonfast.Reader, a *[]json.RawMessage) bool {
				return jsonfast.Slice(d, a, (*jsonfast.Reader).RawField)
			})
		}
	})
}

// textMemo keeps the long texts of the requests read lately: a client
// (Codex) sends its instructions, and the conversation so far, with every
// call.
var textMemo = jsonfast.NewMemo[string](4 << 20)

// toolsMemo keeps the tools of the requests read lately: a client (Codex)
// sends the same ones, byte for byte, on every request.
var toolsMemo = jsonfast.NewMemo[[]Tool](4 << 20)

func readTools(d *jsonfast.Reader, ts *[]Tool) bool { return jsonfast.Slice(d, ts, readTool) }

// cloneTools copies tools read from the text from as if read from to.
func cloneTools(tools []Tool, from, to []byte) []Tool {
	return jsonfast.RebaseEach(tools, func(t *Tool) {
		t.Parameters = jsonfast.Rebase(t.Parameters, from, to)
		if t.Strict != nil {
			t.Strict = new(*t.Strict)
		}
		t.Tools = cloneTools(t.Tools, from, to)
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
			return d.RawField(&t.Parameters)
		case 4:
			return d.BoolPtr(&t.Strict)
		default:
			return jsonfast.Slice(d, &t.Tools, readTool)
		}
	})
}
