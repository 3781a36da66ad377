package dialect

import (
	"bytes"
	"github.com/ptkit/ptk/lenient"
	"strings"
)

// This file reads tag-like tokens: <PTK_CALL>, </tool_call>, <|python_tag|>,
// <｜tool▁call▁begin｜>, <function=name>, <invoke name="x">, <|tool_call>.

const maxTagName = 48
const maxTagLen = 256

type tagInfo struct {
	// name is the tag's name, lower-cased, with the fullwidth bar and the
	// "▁" of DeepSeek's tokens read as '|' and '_', namespace removed.
	name    string
	raw     string // the name as written, lower-cased, with its namespace
	closing bool
	barL    bool // <|name
	barR    bool // name|>
	eq      string
	attrs   string
	end     int // index after '>'
}

var fullBar = []byte("｜")     // U+FF5C
var lowLine = []byte("▁")     // U+2581
var fullBarLen = len(fullBar) // 3

// readTag reads the tag that starts at buf[i] == '<'. ok is false when the
// bytes are not a tag; need is true when the input ends too early to tell.
func readTag(buf []byte, i int, eof bool) (t tagInfo, ok, need bool) {
	j := i + 1
	more := func() (tagInfo, bool, bool) {
		if eof {
			return tagInfo{}, false, false
		}
		return tagInfo{}, false, true
	}
	bar := func() bool {
		if j < len(buf) && buf[j] == '|' {
			j++
			return true
		}
		if bytes.HasPrefix(buf[j:], fullBar) {
			j += fullBarLen
			return true
		}
		return false
	}
	if j >= len(buf) {
		return more()
	}
	if buf[j] == '/' {
		t.closing = true
		j++
	}
	if j >= len(buf) || len(buf)-j < fullBarLen && buf[j] == fullBar[0] {
		return more()
	}
	t.barL = bar()
	if j < len(buf) && buf[j] == '/' && !t.closing {
		t.closing = true
		j++
	}
	var name [maxTagName]byte
	n := 0
	for {
		if j >= len(buf) {
			return more()
		}
		c := buf[j]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == ':', c == '.', c == '-':
		case c == lowLine[0]:
			if len(buf)-j < len(lowLine) {
				return more()
			}
			if !bytes.HasPrefix(buf[j:], lowLine) {
				goto nameDone
			}
			j += len(lowLine) - 1
			c = '_'
		default:
			goto nameDone
		}
		if n == maxTagName {
			return tagInfo{}, false, false
		}
		name[n] = c
		n++
		j++
	}
nameDone:
	if n == 0 {
		return tagInfo{}, false, false
	}
	if buf[j] == fullBar[0] && len(buf)-j < fullBarLen {
		return more()
	}
	t.barR = bar()
	if j >= len(buf) {
		return more()
	}
	if t.barL && t.barR && isTagNameByte(buf[j]) {
		// <｜DSML｜invoke ...>: the barred name is a namespace
		if n+1 >= maxTagName {
			return tagInfo{}, false, false
		}
		name[n] = ':'
		n++
		for j < len(buf) && isTagNameByte(buf[j]) {
			if n == maxTagName {
				return tagInfo{}, false, false
			}
			name[n] = lower[buf[j]]
			n++
			j++
		}
		if j >= len(buf) {
			return more()
		}
		t.barL, t.barR = false, false
	}
	switch c := buf[j]; {
	case c == '>':
		j++
	case c == '=' || c == ' ' || c == '\t':
		start := j
		for {
			if j >= len(buf) || j-i > maxTagLen {
				if j-i > maxTagLen {
					return tagInfo{}, false, false
				}
				return more()
			}
			if buf[j] == '>' || buf[j] == '<' || buf[j] == '\n' {
				break
			}
			j++
		}
		if buf[j] != '>' {
			return tagInfo{}, false, false
		}
		if c == '=' {
			t.eq = string(bytes.TrimSpace(buf[start+1 : j]))
		} else {
			t.attrs = string(bytes.TrimSpace(buf[start:j]))
			if len(t.attrs) > 0 && t.attrs[len(t.attrs)-1] == '/' {
				t.attrs = t.attrs[:len(t.attrs)-1]
			}
		}
		j++
	default:
		return tagInfo{}, false, false
	}
	t.end = j
	t.raw = string(name[:n])
	t.name = stripNamespace(t.raw)
	return t, true, false
}

func isTagNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// stripNamespace turns minimax:tool_call, seed:think, steptml:parameter or
// longcat_arg_key into the name ptk knows.
func stripNamespace(name string) string {
	if k := strings.LastIndexByte(name, ':'); k >= 0 {
		if rest := name[k+1:]; namespaced[rest] {
			return rest
		}
	}
	if rest, ok := strings.CutPrefix(name, "longcat_"); ok && namespaced[rest] {
		return rest
	}
	return name
}

// namespaced are the names a namespace may prefix.
var namespaced = map[string]bool{
	"tool_call": true, "tool_calls": true, "function_call": true, "function_calls": true, "invoke": true,
	"parameter": true, "function": true, "think": true, "arg_key": true, "arg_value": true, "tool_use": true,
}

// attr returns the value of attribute key in attrs (name="x" or name='x' or name=x).
func attr(attrs, key string) (string, bool) {
	s := attrs
	for len(s) > 0 {
		k := 0
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		s = s[k:]
		e := 0
		for e < len(s) && s[e] != '=' && s[e] != ' ' {
			e++
		}
		name := s[:e]
		s = s[e:]
		if len(s) == 0 || s[0] != '=' {
			if name == "" {
				return "", false
			}
			continue
		}
		s = s[1:]
		var val string
		if len(s) > 0 && (s[0] == '"' || s[0] == '\'') {
			q := s[0]
			end := 1
			for end < len(s) && s[end] != q {
				end++
			}
			val = s[1:min(end, len(s))]
			s = s[min(end+1, len(s)):]
		} else {
			end := 0
			for end < len(s) && s[end] != ' ' {
				end++
			}
			val = s[:end]
			s = s[end:]
		}
		if strings.EqualFold(name, key) {
			return val, true
		}
	}
	return "", false
}

var lower [256]byte

func init() {
	for i := range lower {
		c := byte(i)
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
}

// finder searches for any of several lower-case patterns, resumably.
type finder struct {
	pats []string
	at   int
	// limit, if not zero, is where the search stops: a pattern must start
	// before it.
	limit int
}

// find returns the index and pattern of the first match at or after f.at,
// or -1 when there is none yet.
func (f *finder) find(buf []byte, eof bool) (int, int) {
	end := len(buf)
	if f.limit > 0 && f.limit < end {
		end = f.limit
	}
	for i := f.at; i < end; i++ {
		c := lower[buf[i]]
		for k, p := range f.pats {
			if p[0] != c {
				continue
			}
			m, need := lenient.HasPrefixFold(buf, i, p, eof)
			if m {
				f.at = i
				return i, k
			}
			if need {
				f.at = i
				return -1, -1
			}
		}
	}
	f.at = end
	return -1, -1
}
