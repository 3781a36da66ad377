package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// generateRequest is the body of :generateContent and :streamGenerateContent.
type generateRequest struct {
	Contents          []content         `json:"contents"`
	SystemInstruction *content          `json:"systemInstruction,omitempty"`
	Tools             []tool            `json:"tools,omitempty"`
	ToolConfig        *toolConfig       `json:"toolConfig,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

// part is one part of a turn. The API rejects an empty text part, so none
// is sent.
type part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type functionResponse struct {
	ID       string            `json:"id,omitempty"`
	Name     string            `json:"name"`
	Response map[string]string `json:"response"`
}

type tool struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

type functionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	Parameters           map[string]any  `json:"parameters,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type toolConfig struct {
	FunctionCallingConfig functionCallingConfig `json:"functionCallingConfig"`
}

type functionCallingConfig struct {
	Mode                 string   `json:"mode"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

type generationConfig struct {
	Temperature        *float64        `json:"temperature,omitempty"`
	MaxOutputTokens    int             `json:"maxOutputTokens,omitempty"`
	StopSequences      []string        `json:"stopSequences,omitempty"`
	ResponseMIMEType   string          `json:"responseMimeType,omitempty"`
	ResponseSchema     map[string]any  `json:"responseSchema,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
}

// skipSignature is the thought signature the API documents for function
// calls whose own signature the client does not have: ptk keeps none, and
// Gemini 3 rejects a replayed call without one.
const skipSignature = "skip_thought_signature_validator"

func newRequest(req llm.Request, openAPI bool) (*generateRequest, error) {
	r := &generateRequest{Contents: []content{}}
	tools := map[string]string{} // call ID → tool, for results that do not name theirs
	for _, m := range req.Messages {
		var parts []part
		role := "user"
		switch m.Role {
		case ptk.RoleSystem:
			if m.Content != "" {
				if r.SystemInstruction == nil {
					r.SystemInstruction = &content{}
				}
				r.SystemInstruction.Parts = append(r.SystemInstruction.Parts, part{Text: m.Content})
			}
			continue
		case ptk.RoleAssistant:
			role = "model"
			if m.Content != "" {
				parts = append(parts, part{Text: m.Content})
			}
			for i, c := range m.Calls {
				tools[c.ID] = c.Tool
				p := part{FunctionCall: &functionCall{ID: wireID(c.ID), Name: c.Tool, Args: object(c.Args)}}
				if i == 0 {
					p.ThoughtSignature = skipSignature
				}
				parts = append(parts, p)
			}
		case ptk.RoleTool:
			name := m.Tool
			if name == "" {
				name = tools[m.CallID]
			}
			key := "content"
			if m.IsError {
				key = "error"
			}
			parts = append(parts, part{FunctionResponse: &functionResponse{
				ID: wireID(m.CallID), Name: name, Response: map[string]string{key: m.Content},
			}})
		default:
			if m.Content != "" {
				parts = append(parts, part{Text: m.Content})
			}
		}
		switch n := len(r.Contents); {
		case len(parts) == 0:
		case n > 0 && r.Contents[n-1].Role == role:
			r.Contents[n-1].Parts = append(r.Contents[n-1].Parts, parts...)
		default:
			r.Contents = append(r.Contents, content{Role: role, Parts: parts})
		}
	}
	if len(req.Tools) > 0 {
		var decls []functionDeclaration
		for _, t := range req.Tools {
			d := functionDeclaration{Name: t.Name, Description: t.Description}
			switch {
			case len(t.Parameters) == 0:
			case openAPI:
				params, err := openAPISchema(t.Parameters)
				if err != nil {
					return nil, fmt.Errorf("parameters of tool %s: %w", t.Name, err)
				}
				if props, _ := params["properties"].(map[string]any); len(props) > 0 || params["type"] != "object" {
					d.Parameters = params // the API rejects an object without properties
				}
			default:
				d.ParametersJSONSchema = t.Parameters
			}
			decls = append(decls, d)
		}
		r.Tools = []tool{{FunctionDeclarations: decls}}
		switch req.ToolChoice {
		case "", "auto":
		case "none":
			r.ToolConfig = &toolConfig{functionCallingConfig{Mode: "NONE"}}
		case "required":
			r.ToolConfig = &toolConfig{functionCallingConfig{Mode: "ANY"}}
		default:
			r.ToolConfig = &toolConfig{functionCallingConfig{Mode: "ANY", AllowedFunctionNames: []string{req.ToolChoice}}}
		}
	}
	if req.Temperature != nil || req.MaxTokens > 0 || len(req.Stop) > 0 || len(req.ResponseSchema) > 0 {
		r.GenerationConfig = &generationConfig{Temperature: req.Temperature, MaxOutputTokens: max(req.MaxTokens, 0), StopSequences: req.Stop}
	}
	if len(req.ResponseSchema) > 0 {
		r.GenerationConfig.ResponseMIMEType = "application/json"
		if openAPI {
			s, err := openAPISchema(req.ResponseSchema)
			if err != nil {
				return nil, fmt.Errorf("the response schema: %w", err)
			}
			r.GenerationConfig.ResponseSchema = s
		} else {
			r.GenerationConfig.ResponseJSONSchema = req.ResponseSchema
		}
	}
	return r, nil
}

// wireID is the ID sent with a call or its result: none for a "call_N"
// this client made up for a call Gemini gave no ID.
func wireID(id string) string {
	if n, ok := strings.CutPrefix(id, "call_"); ok {
		if _, err := strconv.Atoi(n); err == nil {
			return ""
		}
	}
	return id
}

// object returns args if they are a JSON object, and {} otherwise: the API
// takes nothing else, and a call another provider wrote may be anything.
func object(args json.RawMessage) json.RawMessage {
	var v map[string]json.RawMessage
	if json.Unmarshal(args, &v) != nil || v == nil {
		return json.RawMessage("{}")
	}
	return args
}

// generateResponse is a whole answer, or one event of a stream. Either may
// instead carry an error.
type generateResponse struct {
	Candidates []struct {
		Content struct {
			Parts []part `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason        string `json:"blockReason"`
		BlockReasonMessage string `json:"blockReasonMessage"`
	} `json:"promptFeedback"`
	UsageMetadata *usageMetadata `json:"usageMetadata"`
	ModelVersion  string         `json:"modelVersion"`
	Error         *apiError      `json:"error"`
}

type usageMetadata struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
}

// usage maps the counts: the prompt count includes the cached tokens, and
// the thinking tokens are billed as output.
func (u *usageMetadata) usage() ptk.Usage {
	return ptk.Usage{
		PromptTokens:     u.PromptTokenCount,
		CompletionTokens: u.CandidatesTokenCount + u.ThoughtsTokenCount,
		CacheReadTokens:  u.CachedContentTokenCount,
	}
}

// failure returns the error an answer carries instead of candidates: an
// error object, or a blocked prompt.
func (r *generateResponse) failure() *llm.Error {
	switch {
	case r.Error != nil:
		return r.Error.llmError(0, nil)
	case len(r.Candidates) > 0:
		return nil
	case r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "":
		msg := "the prompt was blocked: " + r.PromptFeedback.BlockReason
		if m := r.PromptFeedback.BlockReasonMessage; m != "" {
			msg += " (" + m + ")"
		}
		return &llm.Error{Kind: llm.ErrBadRequest, Message: msg}
	}
	return nil
}

// response maps a whole answer, which has a candidate. A call without an ID gets "call_N", N its
// place among the calls from 1, as [llm.Collector] does for a stream.
func (r *generateResponse) response() *llm.Response {
	out := &llm.Response{Model: r.ModelVersion}
	if r.UsageMetadata != nil {
		out.Usage = r.UsageMetadata.usage()
	}
	c := &r.Candidates[0]
	out.FinishReason = c.FinishReason
	var text, reasoning strings.Builder
	for _, p := range c.Content.Parts {
		switch {
		case p.FunctionCall != nil:
			out.Calls = append(out.Calls, p.FunctionCall.call(len(out.Calls)))
		case p.Thought:
			reasoning.WriteString(p.Text)
		default:
			text.WriteString(p.Text)
		}
	}
	out.Content, out.Reasoning = text.String(), reasoning.String()
	return out
}

// call maps the call at index i among an answer's calls.
func (f *functionCall) call(i int) ptk.Call {
	id := f.ID
	if id == "" {
		id = "call_" + strconv.Itoa(i+1)
	}
	var args bytes.Buffer
	if json.Compact(&args, f.Args) != nil || args.String() == "null" {
		args.Reset()
		args.WriteString("{}")
	}
	return ptk.Call{ID: id, Tool: f.Name, Args: args.Bytes()}
}
