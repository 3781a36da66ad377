// Package tag reads the tag-like tokens models write, in all their
// spellings: <PTK_CALL>, </tool_call>, <|python_tag|>,
// <｜tool▁call▁begin｜>, <function=name>, <invoke name="x">, <|tool_call>
// ([Read]), and finds closing patterns in a growing buffer, resumably
// ([Finder]). The dialect scanner is built on it.
package tag

import (
	"bytes"
	"github.com/ptkit/ptk/lenient"
	"strings"
)

const maxTagName = 48
const maxTagLen = 256

// Info is a tag as read.
type Info struct {
	// Name is the tag's Name, lower-cased, with the fullwidth bar and the
	// "▁" of DeepSeek's tokens read as '|' and '_', namespace removed.
	Name    string
	Raw     string // the name as written, lower-cased, with its namespace
	Closing bool
	BarL    bool // <|name
	BarR    bool // name|>
	Eq      string
	Attrs   string
	End     int // index after '>'
}

var fullBar = []byte("｜")     // U+FF5C
var lowLine = []byte("▁")     // U+2581
var fullBarLen = len(fullBar) // 3

// Read reads the tag that starts at buf[i] == '<'. ok is false when the
// bytes are not a tag; need is true when the input ends too early to tell.
func Read(buf []byte, i int, eof bool) (t Info, ok, need bool) {
	j := i + 1
	more := func() (Info, bool, bool) {
		if eof {
			return Info{}, false, false
		}
		return Info{}, false, true
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
		t.Closing = true
		j++
	}
	if j >= len(buf) || len(buf)-j < fullBarLen && buf[j] == fullBar[0] {
		return more()
	}
	t.BarL = bar()
	if j < len(buf) && buf[j] == '/' && !t.Closing {
		t.Closing = true
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
			return Info{}, false, false
		}
		name[n] = c
		n++
		j++
	}
nameDone:
	if n == 0 {
		return Info{}, false, false
	}
	if buf[j] == fullBar[0] && len(buf)-j < fullBarLen {
		return more()
	}
	t.BarR = bar()
	if j >= len(buf) {
		return more()
	}
	if t.BarL && t.BarR && isTagNameByte(buf[j]) {
		// <｜DSML｜invoke ...>: the barred name is a namespace
		if n+1 >= maxTagName {
			return Info{}, false, false
		}
		name[n] = ':'
		n++
		for j < len(buf) && isTagNameByte(buf[j]) {
			if n == maxTagName {
				return Info{}, false, false
			}
			name[n] = Lower[buf[j]]
			n++
			j++
		}
		if j >= len(buf) {
			return more()
		}
		t.BarL, t.BarR = false, false
	}
	switch c := buf[j]; {
	case c == '>':
		j++
	case c == '=' || c == ' ' || c == '\t':
		start := j
		for {
			if j >= len(buf) || j-i > maxTagLen {
				if j-i > maxTagLen {
					return Info{}, false, false
				}
				return more()
			}
			if buf[j] == '>' || buf[j] == '<' || buf[j] == '\n' {
				break
			}
			j++
		}
		if buf[j] != '>' {
			return Info{}, false, false
		}
		if c == '=' {
			t.Eq = string(bytes.TrimSpace(buf[start+1 : j]))
		} else {
			t.Attrs = string(bytes.TrimSpace(buf[start:j]))
			if len(t.Attrs) > 0 && t.Attrs[len(t.Attrs)-1] == '/' {
				t.Attrs = t.Attrs[:len(t.Attrs)-1]
			}
		}
		j++
	default:
		return Info{}, false, false
	}
	t.End = j
	t.Raw = string(name[:n])
	t.Name = stripNamespace(t.Raw)
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

// Attr returns the value of attribute key in attrs (name="x" or name='x' or name=x).
func Attr(attrs, key string) (string, bool) {
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

// Lower maps each byte to its ASCII lower case. Read only.
var Lower [256]byte

func init() {
	for i := range Lower {
		c := byte(i)
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		Lower[i] = c
	}
}

// Finder searches for any of several lower-case patterns, resumably.
type Finder struct {
	Pats []string
	At   int
	// Limit, if not zero, is where the search stops: a pattern must start
	// before it.
	Limit int
}

// Find returns the index and pattern of the first match at or after f.at,
// or -1 when there is none yet.
func (f *Finder) Find(buf []byte, eof bool) (int, int) {
	end := len(buf)
	if f.Limit > 0 && f.Limit < end {
		end = f.Limit
	}
	for i := f.At; i < end; i++ {
		c := Lower[buf[i]]
		for k, p := range f.Pats {
			if p[0] != c {
				continue
			}
			m, need := lenient.HasPrefixFold(buf, i, p, eof)
			if m {
				f.At = i
				return i, k
			}
			if need {
				f.At = i
				return -1, -1
			}
		}
	}
	f.At = end
	return -1, -1
}

// NameLen is the length of the name at the start of a tag's text (after
// '<'), up to its attributes.
func NameLen(b []byte) int {
	for k, c := range b {
		if c == ' ' || c == '\t' || c == '=' || c == '>' {
			if c == '>' {
				return k + 1
			}
			return k
		}
	}
	return len(b)
}

// IsToolName reports whether s can be a tool's name: not a placeholder like
// "..." or "name here".
func IsToolName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':' || c >= 0x80) {
			return false
		}
	}
	return true
}
