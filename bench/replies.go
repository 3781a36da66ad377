package bench

import (
	"encoding/json"

	"github.com/ollama/ollama/api"

	"github.com/ptkit/ptk"
)

// toolDefs are the tools both parsers are given.
var toolDefs = []struct{ name, schema string }{
	{"write_file", `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`},
	{"read_file", `{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer"}},"required":["path"]}`},
	{"bash", `{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`},
}

// PTKTools are toolDefs for ptk.
func PTKTools() []ptk.ToolInfo {
	var out []ptk.ToolInfo
	for _, t := range toolDefs {
		out = append(out, ptk.ToolInfo{Name: t.name, Parameters: json.RawMessage(t.schema)})
	}
	return out
}

// OllamaTools are toolDefs for Ollama.
func OllamaTools() []api.Tool {
	var out []api.Tool
	for _, t := range toolDefs {
		var p api.ToolFunctionParameters
		if err := json.Unmarshal([]byte(t.schema), &p); err != nil {
			panic(err)
		}
		out = append(out, api.Tool{Type: "function", Function: api.ToolFunction{Name: t.name, Parameters: p}})
	}
	return out
}
