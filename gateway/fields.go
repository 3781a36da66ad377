package gateway

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// A request body is read twice over without decoding it again: its fields
// as written, to send upstream those the gateway does not read, and their
// places, to set the model without touching the rest.

// member is one member of a JSON object: its key, unescaped, and where its
// value is in the object's text.
type member struct {
	key        string
	start, end int
}

// members returns the members of the JSON object body, in order. body must
// be valid JSON, as json.Unmarshal has found it: members only finds where
// the members begin and end, in one pass, without decoding their values.
func members(body []byte) []member {
	out := make([]member, 0, 16)
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil
	}
	for i++; ; {
		i = skipSpace(body, i)
		if i < len(body) && body[i] == ',' {
			i = skipSpace(body, i+1)
		}
		if i >= len(body) || body[i] != '"' {
			return out // '}'
		}
		end := skipString(body, i)
		key := memberKey(body[i+1 : end-1])
		i = skipSpace(body, skipSpace(body, end)+1) // past ':'
		vend := skipValue(body, i)
		out = append(out, member{key, i, len(bytes.TrimRight(body[:vend], " \t\r\n"))})
		i = vend
	}
}

// memberKey is the key written as raw (without its quotes), unescaped as
// encoding/json reads it (bytes that are not UTF-8 read as U+FFFD).
func memberKey(raw []byte) string {
	key := string(raw)
	if bytes.IndexByte(raw, '\\') >= 0 || !utf8.Valid(raw) {
		json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &key)
	}
	return key
}

// offset is where sub, a slice of b, begins in b.
func offset(sub, b []byte) int { return cap(b) - cap(sub) }

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the end of the string that begins at b[i]: past the
// first quote that an even run of backslashes (none included) stands
// before. Quotes are found with bytes.IndexByte, many bytes at a time:
// most of a request is the text of its strings.
func skipString(b []byte, i int) int {
	open := i
	for i++; i < len(b); {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			break
		}
		q := i + j
		k := q - 1
		for k > open && b[k] == '\\' {
			k--
		}
		if (q-1-k)%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
	return len(b)
}

// skipValue returns the end of the value that begins at b[i]: past its
// closing bracket, or at the ',' or '}' after a scalar.
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = skipString(b, i) - 1
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return len(b)
}

// setFields returns body, valid JSON, with the fields set: a member that is
// there gets the new value in its place, one that is not is added first;
// every other byte stays as it was.
func setFields(body []byte, fields obj) ([]byte, error) {
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return nil, errNotObject
	}
	ms := members(body)
	out := make([]byte, 0, len(body)+64)
	var added []string
	for k := range fields {
		if !slices.ContainsFunc(ms, func(m member) bool { return m.key == k }) {
			added = append(added, k)
		}
	}
	slices.Sort(added)
	open := bytes.IndexByte(body, '{') + 1
	out = append(out, body[:open]...)
	for _, k := range added {
		out = append(append(append(out, marshal(k)...), ':'), fields[k]...)
		if len(ms) > 0 || k != added[len(added)-1] {
			out = append(out, ',')
		}
	}
	last := open
	for _, m := range ms {
		if v, ok := fields[m.key]; ok {
			out = append(append(out, body[last:m.start]...), v...)
			last = m.end
		}
	}
	return append(out, body[last:]...), nil
}

type notObject struct{}

func (notObject) Error() string { return "not a JSON object" }

var errNotObject error = notObject{}
