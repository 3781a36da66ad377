package markup

import (
	"bytes"
	"strings"

	"github.com/ptkit/ptk/dialect/tag"
	"github.com/ptkit/ptk/lenient"
)

// Kimi-K3's tokens: <|open|>name attrs<|sep|> ... <|close|>name<|sep|>.
var (
	k3Open  = []byte("<|open|>")
	k3Close = []byte("<|close|>")
	k3Sep   = []byte("<|sep|>")
)

// KimiK3 reads Kimi-K3's calls: <|open|>tools<|sep|><|open|>call
// tool="x" index="0"<|sep|><|open|>argument key="k" type="number"<|sep|>1
// <|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>. The
// values are text, which the tool's schema types. complete reports that the
// tools block closed, or (a call written without one) the call.
func KimiK3(b []byte, off int) ([]Call, bool) {
	var calls []Call
	var cur *Call
	closed := false // the last token read closed a call
	flush := func() {
		if cur != nil {
			calls = append(calls, *cur)
			cur = nil
		}
	}
	for i := 0; ; {
		k := bytes.Index(b[i:], []byte("<|"))
		if k < 0 {
			break
		}
		i += k
		closing := bytes.HasPrefix(b[i:], k3Close)
		if !closing && !bytes.HasPrefix(b[i:], k3Open) {
			i += 2
			continue
		}
		from := i + len(k3Open)
		if closing {
			from = i + len(k3Close)
		}
		s := bytes.Index(b[from:], k3Sep)
		if s < 0 {
			break
		}
		head := string(bytes.TrimSpace(b[from : from+s]))
		i = from + s + len(k3Sep)
		word, attrs, _ := strings.Cut(head, " ")
		switch {
		case closing && word == "tools":
			flush()
			return noneRead(calls, off), true
		case closing && word == "call":
			flush()
			closed = true
		case !closing && word == "call":
			flush()
			closed = false
			name, _ := tag.Attr(attrs, "tool")
			cur = &Call{Name: name, Offset: off, TextArgs: true, Args: &lenient.Node{Kind: lenient.Object}}
		case !closing && word == "argument" && cur != nil:
			key, _ := tag.Attr(attrs, "key")
			e := bytes.Index(b[i:], []byte("<|close|>argument<|sep|>"))
			if e < 0 {
				flush()
				return noneRead(calls, off), false // cut inside a value
			}
			cur.Args.Keys = append(cur.Args.Keys, key)
			cur.Args.Kids = append(cur.Args.Kids, &lenient.Node{Kind: lenient.String, Str: string(b[i : i+e])})
			i += e + len("<|close|>argument<|sep|>")
		}
	}
	complete := closed && cur == nil
	flush()
	return noneRead(calls, off), complete
}

// noneRead gives a block with no call in it one that says so: the block
// was a call's start, and a call that starts must end.
func noneRead(calls []Call, off int) []Call {
	if len(calls) == 0 {
		return []Call{{Offset: off, Err: "no call in the tools block"}}
	}
	return calls
}
