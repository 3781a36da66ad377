package markup

// Calls between special tokens: Kimi K2's and DeepSeek's.

import (
	"bytes"
	"strings"

	"github.com/ptkit/ptk/dialect/tag"
	"github.com/ptkit/ptk/lenient"
)

// Tokens spells special tokens the ways models write them: <|name|>,
// <｜name｜>, and DeepSeek's <｜name▁with▁low▁lines｜>.
func Tokens(names ...string) []string {
	var out []string
	for _, n := range names {
		low := strings.ReplaceAll(n, "_", "▁")
		out = append(out, "<|"+n+"|>", "<｜"+n+"｜>", "<｜"+low+"｜>", "<|"+low+"|>")
	}
	return out
}

// TokenName reads a name from a call header: Kimi's functions.get_weather:0
// loses its namespace and index.
func TokenName(h string) string {
	h = strings.TrimSpace(h)
	if c := strings.LastIndexByte(h, ':'); c > 0 && isDigits(h[c+1:]) {
		h = h[:c]
	}
	return strings.TrimPrefix(h, "functions.")
}

// TokenSeps separate a token call's header from its arguments.
var TokenSeps = Tokens("tool_sep", "tool_call_argument_begin")

// TokenCall reads the call between Kimi's or DeepSeek's call tokens: a
// header with the name, a separator, and JSON (maybe fenced) or Step-3's
// XML.
func TokenCall(b []byte, off int) Call {
	f := tag.Finder{Pats: TokenSeps}
	k, p := f.Find(b, true)
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '<' && (k < 0 || bytes.Index(b, t) < k) {
		calls, _ := XMLCalls(t, off)
		return calls[0]
	}
	if k < 0 {
		return Call{Name: TokenName(string(b)), Offset: off, Err: "the call has no arguments"}
	}
	header := strings.TrimSpace(string(b[:k]))
	rest := bytes.TrimSpace(b[k+len(TokenSeps[p]):])
	if len(rest) > 0 && rest[0] == '<' { // Step-3: <steptml:invoke name="x">...
		calls, _ := XMLCalls(rest, off)
		return calls[0]
	}
	name := header
	if header == "function" || header == "" {
		// DeepSeek R1: the name is the first line after the separator
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			nl = len(rest)
		}
		name = string(rest[:nl])
		rest = rest[nl:]
	}
	name = TokenName(name)
	if r := bytes.TrimSpace(rest); len(r) > 0 && r[0] == '<' { // Step-3 with its name line
		calls, _ := XMLCalls(r, off)
		if calls[0].Name == "" || calls[0].Name == name {
			calls[0].Name = name
			return calls[0]
		}
	}
	body := stripFence(bytes.TrimSpace(rest))
	if len(body) == 0 {
		return Call{Name: name, Offset: off}
	}
	n, rep, err := lenient.Parse(body)
	if err != nil {
		msg := "the call's JSON cannot be read: " + err.Error()
		if se, ok := err.(*lenient.SyntaxError); ok && se.Truncated {
			return Call{Name: name, Offset: off, Err: msg, Cut: true}
		}
		return Call{Name: name, Offset: off, Err: msg}
	}
	return Call{Name: name, Args: lenient.Detach(n), Offset: off, Repairs: rep.Strings()}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// stripFence removes a ```json ... ``` fence around b.
func stripFence(b []byte) []byte {
	if !bytes.HasPrefix(b, []byte("```")) {
		return b
	}
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return b
	}
	b = b[nl+1:]
	b = bytes.TrimSpace(b)
	b = bytes.TrimSuffix(b, []byte("```"))
	return bytes.TrimSpace(b)
}
