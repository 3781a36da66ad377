package lenient

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Gemma reads Gemma 4's argument values, {key:<|"|>text<|"|>,n:1,ok:true}:
// strings between <|"|> quotes (FunctionGemma's <escape>), bare keys, bare
// scalars, nested objects and lists. Src[Pos:] is what is left to read.
type Gemma struct {
	Src []byte
	Pos int
}

// GemmaQuotes are the quotes of Gemma's strings: Gemma 4's, FunctionGemma's.
var GemmaQuotes = []string{`<|"|>`, `<escape>`}

// WS skips white space.
func (g *Gemma) WS() {
	for g.Pos < len(g.Src) && IsWS(g.Src[g.Pos]) {
		g.Pos++
	}
}

// Value reads one value, or returns nil when there is none.
func (g *Gemma) Value() *Node { return g.value(0) }

func (g *Gemma) value(depth int) *Node {
	g.WS()
	if g.Pos >= len(g.Src) || depth > MaxDepth {
		return nil
	}
	b := g.Src
	switch {
	case b[g.Pos] == '<':
		for _, q := range GemmaQuotes {
			if !bytes.HasPrefix(b[g.Pos:], []byte(q)) {
				continue
			}
			g.Pos += len(q)
			end := bytes.Index(b[g.Pos:], []byte(q))
			if end < 0 {
				return nil
			}
			s := string(b[g.Pos : g.Pos+end])
			g.Pos += end + len(q)
			return &Node{Kind: String, Str: s}
		}
		return nil
	case b[g.Pos] == '{':
		g.Pos++
		n := &Node{Kind: Object}
		for {
			g.WS()
			if g.Pos < len(b) && b[g.Pos] == '}' {
				g.Pos++
				return n
			}
			s := g.Pos
			for g.Pos < len(b) && b[g.Pos] != ':' && b[g.Pos] != '}' {
				g.Pos++
			}
			if g.Pos >= len(b) || b[g.Pos] != ':' {
				return nil
			}
			key := strings.TrimSpace(string(b[s:g.Pos]))
			key = strings.Trim(key, `"'`)
			g.Pos++
			v := g.value(depth + 1)
			if v == nil {
				return nil
			}
			n.Keys = append(n.Keys, key)
			n.Kids = append(n.Kids, v)
			g.WS()
			if g.Pos < len(b) && b[g.Pos] == ',' {
				g.Pos++
			}
		}
	case b[g.Pos] == '[':
		g.Pos++
		n := &Node{Kind: Array}
		for {
			g.WS()
			if g.Pos < len(b) && b[g.Pos] == ']' {
				g.Pos++
				return n
			}
			v := g.value(depth + 1)
			if v == nil {
				return nil
			}
			n.Kids = append(n.Kids, v)
			g.WS()
			if g.Pos < len(b) && b[g.Pos] == ',' {
				g.Pos++
			}
		}
	}
	if b[g.Pos] == '"' { // a JSON string where <|"|> belongs: call:bash{command:"ls"}
		if n := g.jsonString(); n != nil {
			return n
		}
	}
	// a bare scalar up to ',', '}' or ']'
	s := g.Pos
	for g.Pos < len(b) && b[g.Pos] != ',' && b[g.Pos] != '}' && b[g.Pos] != ']' {
		g.Pos++
	}
	if g.Pos == s {
		return nil // nothing here: not a value
	}
	w := strings.TrimSpace(string(b[s:g.Pos]))
	switch w {
	case "true", "True":
		return &Node{Kind: Bool, Bool: true}
	case "false", "False":
		return &Node{Kind: Bool}
	case "null", "None":
		return &Node{Kind: Null}
	}
	if num, ok, _ := ParseNumberWord(w); ok {
		return &Node{Kind: Number, Str: num}
	}
	return &Node{Kind: String, Str: w}
}

// jsonString reads a JSON string at Pos whose closing quote is followed by
// the end of the value (',', '}', ']'), or returns nil and leaves Pos.
func (g *Gemma) jsonString() *Node {
	b := g.Src
	for i := g.Pos + 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			j := i + 1
			for j < len(b) && IsWS(b[j]) {
				j++
			}
			if j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
				continue // a quote inside the text
			}
			var str string
			if json.Unmarshal(b[g.Pos:i+1], &str) != nil {
				return nil
			}
			g.Pos = i + 1
			return &Node{Kind: String, Str: str}
		}
	}
	return nil
}
