package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ptkit/ptk"
)

// ResultText turns an MCP tool result into what the model reads: the text
// content as it is, the structured content as JSON when there is no text
// (MCP asks servers to give structured content as text too, and a server's
// text is what it meant a reader to see), and a one-line description
// of each image, audio clip, resource link and binary resource (a model
// that reads text cannot use the bytes, but must know they came). An
// embedded text resource is given with its URI. isError results are
// [ptk.Result] errors, which the model reads as failures to correct.
func ResultText(res *sdk.CallToolResult) ptk.Result {
	if res == nil {
		return ptk.Result{Content: "The MCP server returned no result.", IsError: true}
	}
	var parts []string
	var structured []byte
	hasText := false
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && string(b) != "null" {
			structured = b
		}
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			// A server that returns structured content should also return
			// it as JSON text; say it once.
			if structured != nil && sameJSON(c.Text, structured) {
				continue
			}
			parts = append(parts, c.Text)
			hasText = true
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %s; this text interface cannot show it]", orUnknown(c.MIMEType), size(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %s; this text interface cannot play it]", orUnknown(c.MIMEType), size(c.Data)))
		case *sdk.ResourceLink:
			s := "[resource link: " + c.URI
			if c.Name != "" && c.Name != c.URI {
				s += " (" + c.Name + ")"
			}
			if c.MIMEType != "" {
				s += ", " + c.MIMEType
			}
			if c.Description != "" {
				s += ": " + c.Description
			}
			parts = append(parts, s+"]")
		case *sdk.EmbeddedResource:
			r := c.Resource
			switch {
			case r == nil:
				parts = append(parts, "[an empty embedded resource]")
			case r.Text != "" || len(r.Blob) == 0:
				parts = append(parts, fmt.Sprintf("[resource %s%s]\n%s", r.URI, mimeSuffix(r.MIMEType), r.Text))
			default:
				parts = append(parts, fmt.Sprintf("[resource %s: %s, %s of binary data; this text interface cannot show it]", r.URI, orUnknown(r.MIMEType), size(r.Blob)))
			}
		default:
			b, _ := json.Marshal(c)
			parts = append(parts, "[content this client does not know: "+clip(string(b), 200)+"]")
		}
	}
	if structured != nil && !hasText {
		parts = append(parts, string(structured))
	}
	if note := cutNote(res.Meta); note != "" {
		// First, where a cap on what the model reads cannot cut it off.
		parts = append([]string{note}, parts...)
	}
	return ptk.Result{Content: strings.Join(parts, "\n"), IsError: res.IsError}
}

// cutNote says that ptk cut a result it read from a server (the _meta
// that boundedMessage adds), or nothing.
func cutNote(meta sdk.Meta) string {
	raw, ok := meta[cutMeta]
	if !ok {
		return ""
	}
	var c cutInfo
	b, _ := json.Marshal(raw)
	if json.Unmarshal(b, &c) != nil || c.Read <= 0 {
		return ""
	}
	return fmt.Sprintf("[ptk cut this result: the MCP server sent %s in one message and ptk kept %s of it; what follows is its beginning.]",
		mib(c.Read), mib(int64(c.Kept)))
}

// mib writes a size in MiB, or KiB below one MiB.
func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// sameJSON reports whether text is the JSON value b, in any layout.
func sameJSON(text string, b []byte) bool {
	var v any
	if json.Unmarshal([]byte(text), &v) != nil {
		return false
	}
	t, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var w any
	json.Unmarshal(b, &w)
	u, _ := json.Marshal(w)
	return bytes.Equal(t, u)
}

// size describes the size of data.
func size(data []byte) string {
	if n := len(data); n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f KB", float64(len(data))/1024)
}

func orUnknown(mime string) string {
	if mime == "" {
		return "type unknown"
	}
	return mime
}

func mimeSuffix(mime string) string {
	if mime == "" {
		return ""
	}
	return ", " + mime
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
