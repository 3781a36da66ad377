package wire

import (
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
)

// A stream's chunks are read by the dozen for every answer, and
// encoding/json reads each one twice (once to check it, once to decode it)
// through reflection: it was the largest cost of a streamed answer read
// through the gateway. DecodeChunk reads the chunks that carry text — the
// bulk of a stream — in one pass, and leaves every other shape to
// encoding/json.

// DecodeChunk reads data, a stream chunk, into c when it has the common
// shape: id, object, created, model and system_fingerprint, and one choice
// whose delta holds only a role, content or reasoning, a finish_reason and
// null logprobs, and no usage or error. It reports false, with c in any
// state, for anything else, valid or not: the caller then decodes data with
// json.Unmarshal, which gives the same result for what DecodeChunk reads.
func DecodeChunk(data []byte, c *Completion) bool {
	*c = Completion{}
	d := chunkReader{b: data}
	ok := d.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return d.str(&c.ID)
		case "object":
			return d.str(&c.Object)
		case "model":
			return d.str(&c.Model)
		case "created":
			return d.int(&c.Created)
		case "system_fingerprint", "service_tier", "obfuscation":
			var s string
			return d.null() || d.str(&s)
		case "usage":
			return d.null()
		case "error":
			c.Error = json.RawMessage("null") // as encoding/json keeps it
			return d.null()
		case "choices":
			return d.choices(c)
		}
		return false
	})
	return ok && d.end()
}

// chunkReader reads JSON from b at i.
type chunkReader struct {
	b []byte
	i int
}

func (d *chunkReader) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// end reports whether only space is left.
func (d *chunkReader) end() bool {
	d.space()
	return d.i == len(d.b)
}

// byte reads the byte c, after space.
func (d *chunkReader) byte(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// object reads an object, giving each key to member, which reads its value.
// A key given twice is refused (encoding/json would keep the last).
func (d *chunkReader) object(member func(key []byte) bool) bool {
	if !d.byte('{') {
		return false
	}
	if d.byte('}') {
		return true
	}
	var seen [12]string
	n := 0
	for {
		d.space()
		key, ok := d.rawKey()
		if !ok || !d.byte(':') {
			return false
		}
		for _, k := range seen[:n] {
			if k == string(key) {
				return false
			}
		}
		if n < len(seen) {
			seen[n] = string(key)
			n++
		} else {
			return false
		}
		if !member(key) {
			return false
		}
		if d.byte('}') {
			return true
		}
		if !d.byte(',') {
			return false
		}
	}
}

// rawKey reads a key without escapes (the keys this reader knows have none).
func (d *chunkReader) rawKey() ([]byte, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false
	}
	for j := d.i + 1; j < len(d.b); j++ {
		switch d.b[j] {
		case '"':
			k := d.b[d.i+1 : j]
			d.i = j + 1
			return k, true
		case '\\':
			return nil, false
		}
		if d.b[j] < 0x20 {
			return nil, false
		}
	}
	return nil, false
}

// null reads null.
func (d *chunkReader) null() bool {
	d.space()
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// int reads a non-negative integer that fits an int64.
func (d *chunkReader) int(v *int64) bool {
	d.space()
	start := d.i
	var n int64
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		if n > (1<<62)/10 {
			return false
		}
		n = n*10 + int64(d.b[d.i]-'0')
		d.i++
	}
	if d.i == start || d.i-start > 1 && d.b[start] == '0' {
		return false
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return false
	}
	*v = n
	return true
}

// str reads a string into s, its escapes decoded as encoding/json does.
func (d *chunkReader) str(s *string) bool {
	d.space()
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return false
	}
	j := d.i + 1
	for j < len(d.b) && d.b[j] != '"' && d.b[j] != '\\' && d.b[j] >= 0x20 && d.b[j] < utf8.RuneSelf {
		j++
	}
	if j < len(d.b) && d.b[j] == '"' {
		*s = string(d.b[d.i+1 : j])
		d.i = j + 1
		return true
	}
	out := append(make([]byte, 0, j-d.i+16), d.b[d.i+1:j]...)
	for j < len(d.b) {
		c := d.b[j]
		switch {
		case c == '"':
			*s = string(out)
			d.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if j+1 >= len(d.b) {
				return false
			}
			j++
			switch d.b[j] {
			case '"', '\\', '/':
				out = append(out, d.b[j])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(d.b, j+1)
				if !ok {
					return false
				}
				j += 4
				if utf16.IsSurrogate(r) {
					r2, ok2 := rune(-1), false
					if j+6 < len(d.b) && d.b[j+1] == '\\' && d.b[j+2] == 'u' {
						r2, ok2 = hex4(d.b, j+3)
					}
					if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
						r = dec
						j += 6
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				return false
			}
			j++
		case c < utf8.RuneSelf:
			out = append(out, c)
			j++
		default:
			r, size := utf8.DecodeRune(d.b[j:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, "\uFFFD"...) // as encoding/json replaces invalid UTF-8
			} else {
				out = append(out, d.b[j:j+size]...)
			}
			j += size
		}
	}
	return false
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// choices reads an array of one choice.
func (d *chunkReader) choices(c *Completion) bool {
	if !d.byte('[') {
		return false
	}
	c.Choices = make([]Choice, 1)
	ch := &c.Choices[0]
	ok := d.object(func(key []byte) bool {
		switch string(key) {
		case "index":
			var n int64
			if !d.int(&n) || n > 1<<31 {
				return false
			}
			ch.Index = int(n)
			return true
		case "finish_reason":
			if d.null() {
				return true
			}
			var s string
			if !d.str(&s) {
				return false
			}
			ch.FinishReason = &s
			return true
		case "logprobs":
			return d.null()
		case "delta":
			ch.Delta = &Delta{}
			return d.object(func(key []byte) bool {
				var t *Text
				switch string(key) {
				case "role":
					return d.null() || d.str(&ch.Delta.Role)
				case "content":
					t = &ch.Delta.Content
				case "reasoning_content":
					t = &ch.Delta.ReasoningContent
				case "reasoning":
					t = &ch.Delta.Reasoning
				default:
					return false
				}
				if d.null() {
					return true
				}
				var s string
				if !d.str(&s) {
					return false
				}
				*t = Text(s)
				return true
			})
		}
		return false
	})
	return ok && d.byte(']')
}
