package mcp

import (
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestResultText(t *testing.T) {
	png := make([]byte, 2048)
	for _, tc := range []struct {
		name  string
		res   *sdk.CallToolResult
		want  string
		isErr bool
	}{
		{"text", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a"}, &sdk.TextContent{Text: "b"}}}, "a\nb", false},
		{"error", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "no such file"}}, IsError: true}, "no such file", true},
		{"image", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "here:"}, &sdk.ImageContent{Data: png, MIMEType: "image/png"}}},
			"here:\n[image: image/png, 2.0 KB; this text interface cannot show it]", false},
		{"audio", &sdk.CallToolResult{Content: []sdk.Content{&sdk.AudioContent{Data: []byte("abc")}}},
			"[audio: type unknown, 3 bytes; this text interface cannot play it]", false},
		{"link", &sdk.CallToolResult{Content: []sdk.Content{&sdk.ResourceLink{URI: "file:///a.go", Name: "a.go", MIMEType: "text/x-go", Description: "the main file"}}},
			"[resource link: file:///a.go (a.go), text/x-go: the main file]", false},
		{"text resource", &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://1", MIMEType: "text/plain", Text: "hello"}}}},
			"[resource mem://1, text/plain]\nhello", false},
		{"blob resource", &sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://2", MIMEType: "application/gzip", Blob: []byte{1, 2, 3}}}}},
			"[resource mem://2: application/gzip, 3 bytes of binary data; this text interface cannot show it]", false},
		{"structured only", &sdk.CallToolResult{StructuredContent: map[string]any{"t": 21, "sky": "clear"}},
			`{"sky":"clear","t":21}`, false},
		{"structured and the same as text", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "{\n  \"t\": 21,\n  \"sky\": \"clear\"\n}"}}, StructuredContent: map[string]any{"t": 21, "sky": "clear"}},
			`{"sky":"clear","t":21}`, false},
		{"structured and other text", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "21 degrees, clear"}}, StructuredContent: map[string]any{"t": 21}},
			"21 degrees, clear", false},
		{"nothing", &sdk.CallToolResult{}, "", false},
		{"nil", nil, "The MCP server returned no result.", true},
	} {
		got := ResultText(tc.res)
		if got.Content != tc.want || got.IsError != tc.isErr {
			t.Errorf("%s: got %q (error %v), want %q (error %v)", tc.name, got.Content, got.IsError, tc.want, tc.isErr)
		}
	}
	if got := ResultText(&sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/jpeg", Data: make([]byte, 10)}}}); strings.Contains(got.Content, "\x00") {
		t.Error("image bytes leaked into the text")
	}
}
