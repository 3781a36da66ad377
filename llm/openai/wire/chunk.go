package wire

import (
	"strings"

	"github.com/ptkit/ptk/internal/jsonfast"
)

// A stream's chunks come by the dozen for every answer, each a few bytes of
// text in a few hundred of JSON whose shape every OpenAI-compatible server
// (OpenAI, vLLM, llama.cpp, Ollama, OpenRouter) repeats: an id, object,
// created and model, then one choice with a delta of text or of a tool
// call, its finish reason and null log-probabilities, or no choice and the
// usage. fastChunk reads exactly that shape in one pass without callbacks
// or allocations beside the text's; anything else — a key it does not know
// in another case, a duplicate, an object or array where it expects none,
// a second choice, an error — it leaves to decodeCompletion, which reads
// all JSON as encoding/json does. A fuzz test holds the three to the same
// result.

// The fields of each object of a chunk, for telling an unknown key from a
// known one in another case (encoding/json matches keys regardless of
// case).
var (
	chunkKeys    = []string{"id", "object", "created", "model", "choices", "usage", "error"}
	choiceKeys   = []string{"index", "message", "delta", "finish_reason", "logprobs"}
	deltaKeys    = []string{"role", "content", "reasoning_content", "reasoning", "tool_calls"}
	callKeys     = []string{"index", "id", "type", "function"}
	functionKeys = []string{"name", "arguments"}
	usageKeys    = []string{"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "prompt_cache_hit_tokens"}
	detailsKeys  = []string{"cached_tokens"}
)

// chunkScanner reads a chunk's JSON from b[i:].
type chunkScanner struct {
	b []byte
	i int
}

// A stream's chunks differ only in their choice: the bytes before it
// (OpenAI, vLLM and Ollama write id, object, created, model there) and
// after it (llama.cpp, and Go servers that sort keys, write them there)
// are the same from one chunk to the next. fastChunk remembers, for the
// last chunk it read, those bytes and what they held (a region), and when
// the next chunk begins or ends with the same bytes it takes their fields
// from memory after one comparison instead of reading them again: the
// same bytes read the same way.

// A region is the bytes of a chunk before or after its choices and the
// top-level fields they set.
type region struct {
	bytes             []byte
	seen              uint // the fields' bits, as fastChunk numbers them
	id, object, model string
	created           int64
}

// Bits of the top-level fields in fastChunk's seen.
const (
	bitID = 1 << iota
	bitObject
	bitCreated
	bitModel
	bitChoices
	bitUsage
)

// apply sets the fields the region holds, and reports false when one was
// set already (a key twice, left to the general decoder).
func (r *region) apply(c *Completion, seen *uint) bool {
	if *seen&r.seen != 0 {
		return false
	}
	*seen |= r.seen
	if r.seen&bitID != 0 {
		c.ID = r.id
	}
	if r.seen&bitObject != 0 {
		c.Object = r.object
	}
	if r.seen&bitCreated != 0 {
		c.Created = r.created
	}
	if r.seen&bitModel != 0 {
		c.Model = r.model
	}
	return true
}

// keep remembers b as a region holding the fields of seen, from c.
func (r *region) keep(b []byte, seen uint, c *Completion) {
	r.bytes = append(r.bytes[:0], b...)
	r.seen, r.id, r.object, r.model, r.created = seen, c.ID, c.Object, c.Model, c.Created
}

// fastChunk reads data, a stream chunk, into c (zero) with mem's memory,
// as decodeCompletion does; false leaves it to decodeCompletion, with c
// and mem's choice, delta and finish reason to be set again. No closures:
// a scanner they captured went to the heap for every chunk.
func fastChunk(data []byte, c *Completion, mem *chunkMemory) bool {
	s := chunkScanner{b: data}
	var seen, before uint
	// The offsets where the choices' value begins and ends; -1: none.
	from, to := -1, -1
	var more, ok bool
	if p := mem.before.bytes; len(p) > 0 && len(data) > len(p) && string(data[:len(p)]) == string(p) {
		// The same bytes before the choices as the last chunk's.
		mem.before.apply(c, &seen)
		before, from, s.i = seen, len(p), len(p)
		if !s.choices(c, mem) {
			return false
		}
		seen |= bitChoices
		to = s.i
		if a := &mem.after; len(a.bytes) > 0 && string(data[to:]) == string(a.bytes) {
			return a.apply(c, &seen)
		}
		more, ok = s.end()
	} else {
		more, ok = s.begin()
	}
	for ok && more {
		key, kok := s.key()
		if !kok {
			return false
		}
		var bit uint
		switch string(key) {
		case "id":
			bit, ok = bitID, s.stringLike(&c.ID, mem.id)
		case "object":
			bit, ok = bitObject, s.stringLike(&c.Object, mem.object)
		case "created":
			bit, ok = bitCreated, s.int64(&c.Created)
		case "model":
			bit, ok = bitModel, s.stringLike(&c.Model, mem.model)
		case "choices":
			if seen&bitChoices != 0 {
				return false
			}
			before, from = seen, s.i
			bit, ok = bitChoices, s.choices(c, mem)
			to = s.i
			if a := &mem.after; ok && len(a.bytes) > 0 && string(data[to:]) == string(a.bytes) {
				// The same bytes after the choices as the last chunk's.
				seen |= bitChoices
				return a.apply(c, &seen)
			}
		case "usage":
			bit, ok = bitUsage, s.usage(c)
		default:
			ok = s.unknown(key, chunkKeys)
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		more, ok = s.end()
	}
	s.space()
	if !ok || s.i != len(s.b) {
		return false
	}
	// Remember the regions around the choices, when they hold no usage (a
	// stream's last chunk, which no other follows).
	if from >= 0 && c.Usage == nil {
		mem.before.keep(data[:from], before, c)
		mem.after.keep(data[to:], seen&^before&^bitChoices, c)
	}
	return true
}

// begin reads the opening brace of an object; more says a member follows.
func (s *chunkScanner) begin() (more, ok bool) {
	if !s.byte('{') {
		return false, false
	}
	if s.byte('}') {
		return false, true
	}
	return true, true
}

// end reads what follows a member: a comma (more) or the closing brace.
// A member's bit in seen (0 for an unknown key, which may repeat) is
// checked by the caller: a key seen twice is left to the general decoder,
// as is a key with escapes.
func (s *chunkScanner) end() (more, ok bool) {
	if s.byte(',') {
		return true, true
	}
	return false, s.byte('}')
}

// object reads an object's members: field reads the value of each key and
// says which of the object's keys it was, one bit each (0 for a key it
// does not know). A key twice is refused: the general decoder says what
// it means.
func (s *chunkScanner) object(field func(key []byte) (bit uint, ok bool)) bool {
	var seen uint
	more, ok := s.begin()
	for ok && more {
		key, kok := s.key()
		if !kok {
			return false
		}
		bit, fok := field(key)
		if !fok || seen&bit != 0 {
			return false
		}
		seen |= bit
		more, ok = s.end()
	}
	return ok
}

func (s *chunkScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte reads c, after any space.
func (s *chunkScanner) byte(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// peek returns the next byte, 0 at the end.
func (s *chunkScanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// null reads null when it comes next.
func (s *chunkScanner) null() bool {
	return s.literal("null")
}

// key reads a key of plain printable ASCII, without escapes, and its
// colon.
func (s *chunkScanner) key() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			key := s.b[start : s.i-1]
			if !s.byte(':') {
				return nil, false
			}
			s.space()
			return key, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// str reads the string that comes next. plain says the text between its
// quotes is the string itself (printable ASCII, no escapes); otherwise tok
// is the whole string, quotes included, for jsonfast to check and decode.
func (s *chunkScanner) str() (tok []byte, plain, ok bool) {
	if s.peek() != '"' {
		return nil, false, false
	}
	plain = true
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			if plain {
				tok = s.b[s.i+1 : j]
			} else {
				tok = s.b[s.i : j+1]
			}
			s.i = j + 1
			return tok, plain, true
		case c == '\\':
			plain = false
			j++
		case c < 0x20 || c >= 0x80:
			plain = false
		}
	}
	return nil, false, false
}

// decode decodes a string str returned that is not plain, as jsonfast
// (and encoding/json) does.
func decode(tok []byte, v *string) bool {
	r := jsonfast.NewReader(tok)
	return r.String(v) && r.End()
}

// stringLike reads a string or null (leaving v) as jsonfast's StringLike
// does: like itself, without a copy, when the string is like.
func (s *chunkScanner) stringLike(v *string, like string) bool {
	if s.null() {
		return true
	}
	tok, plain, ok := s.str()
	switch {
	case !ok:
		return false
	case !plain:
		return decode(tok, v)
	case string(tok) == like:
		*v = like
	default:
		*v = string(tok)
	}
	return true
}

// text reads a string or null (leaving v): a delta's text. An array of
// parts, which Text also reads, is left to the general decoder.
func (s *chunkScanner) text(v *Text) bool {
	str := string(*v)
	if !s.stringLike(&str, "") {
		return false
	}
	*v = Text(str)
	return true
}

// int64 reads an integer, or null (leaving v): digits with an optional
// minus, no leading zero, at most 18 of them. Any other number (a
// fraction, an exponent) is left to the general decoder.
func (s *chunkScanner) int64(v *int64) bool {
	if s.null() {
		return true
	}
	neg := s.peek() == '-'
	if neg {
		s.i++
	}
	start := s.i
	var n int64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		n = n*10 + int64(s.b[s.i]-'0')
		s.i++
	}
	digits := s.i - start
	if digits == 0 || digits > 18 || digits > 1 && s.b[start] == '0' {
		return false
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	if neg {
		n = -n
	}
	*v = n
	return true
}

// int reads an integer into an int, as int64 does.
func (s *chunkScanner) int(v *int) bool {
	n := int64(*v)
	if !s.int64(&n) {
		return false
	}
	*v = int(n)
	return true
}

// unknown skips the value of a key the chunk's type does not have: a
// string, a simple number, true, false or null. A key that is one of known
// in another case (or has bytes beyond ASCII, which case-folding may map
// to one) is left to the general decoder, as is an object or an array.
func (s *chunkScanner) unknown(key []byte, known []string) bool {
	for _, k := range known {
		if strings.EqualFold(string(key), k) {
			return false
		}
	}
	switch c := s.peek(); {
	case c == '"':
		tok, plain, ok := s.str()
		var str string
		return ok && (plain || decode(tok, &str))
	case c == '-' || c >= '0' && c <= '9':
		var n int64
		return s.int64(&n)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	}
	return s.null()
}

func (s *chunkScanner) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// choices reads no choice or one, the first in mem's memory. A second,
// or a null one, is left to the general decoder.
func (s *chunkScanner) choices(c *Completion, mem *chunkMemory) bool {
	if !s.byte('[') {
		return false
	}
	c.Choices = mem.choice[:0]
	if s.byte(']') {
		return true
	}
	c.Choices = mem.choice[:1]
	ch := &c.Choices[0]
	*ch = Choice{}
	return s.object(func(key []byte) (bit uint, ok bool) {
		ok = true
		switch string(key) {
		case "index":
			bit, ok = 1, s.int(&ch.Index)
		case "delta":
			bit = 2
			if !s.null() {
				mem.delta = Delta{}
				ch.Delta = &mem.delta
				ok = s.delta(&mem.delta, mem)
			}
		case "finish_reason":
			bit = 4
			if !s.null() {
				ch.FinishReason = &mem.finish
				ok = s.stringLike(&mem.finish, mem.reason)
			}
		case "logprobs":
			bit, ok = 8, s.null()
		default:
			ok = s.unknown(key, choiceKeys)
		}
		return bit, ok
	}) && s.byte(']')
}

func (s *chunkScanner) delta(d *Delta, mem *chunkMemory) bool {
	return s.object(func(key []byte) (bit uint, ok bool) {
		ok = true
		switch string(key) {
		case "role":
			bit, ok = 1, s.stringLike(&d.Role, mem.role)
		case "content":
			bit, ok = 2, s.text(&d.Content)
		case "reasoning_content":
			bit, ok = 4, s.text(&d.ReasoningContent)
		case "reasoning":
			bit, ok = 8, s.text(&d.Reasoning)
		case "tool_calls":
			bit, ok = 16, s.null() || s.toolCalls(d, mem)
		default:
			ok = s.unknown(key, deltaKeys)
		}
		return bit, ok
	})
}

// toolCalls reads a delta's calls, in mem's memory when they are few.
func (s *chunkScanner) toolCalls(d *Delta, mem *chunkMemory) bool {
	if !s.byte('[') {
		return false
	}
	d.ToolCalls = mem.calls[:0]
	if s.byte(']') {
		return true
	}
	for {
		d.ToolCalls = append(d.ToolCalls, ToolCall{})
		n := len(d.ToolCalls) - 1
		if !s.toolCall(&d.ToolCalls[n], n, mem) {
			return false
		}
		if s.byte(',') {
			continue
		}
		return s.byte(']')
	}
}

// toolCall reads the call at n in a delta's calls.
func (s *chunkScanner) toolCall(tc *ToolCall, n int, mem *chunkMemory) bool {
	return s.object(func(key []byte) (bit uint, ok bool) {
		ok = true
		switch string(key) {
		case "index":
			bit = 1
			if !s.null() {
				idx := new(int)
				if n < len(mem.index) {
					idx = &mem.index[n]
					*idx = 0
				}
				tc.Index = idx
				ok = s.int(idx)
			}
		case "id":
			bit, ok = 2, s.stringLike(&tc.ID, "")
		case "type":
			bit, ok = 4, s.stringLike(&tc.Type, "function")
		case "function":
			bit, ok = 8, s.null() || s.function(&tc.Function)
		default:
			ok = s.unknown(key, callKeys)
		}
		return bit, ok
	})
}

func (s *chunkScanner) function(f *FunctionCall) bool {
	return s.object(func(key []byte) (bit uint, ok bool) {
		ok = true
		switch string(key) {
		case "name":
			bit, ok = 1, s.stringLike(&f.Name, "")
		case "arguments":
			// A string's text; null leaves them; any other value (kept
			// as written) is left to the general decoder.
			bit = 2
			if !s.null() {
				var t Text
				ok = s.text(&t)
				f.Arguments = Arguments(t)
			}
		default:
			ok = s.unknown(key, functionKeys)
		}
		return bit, ok
	})
}

// usage reads the usage or null. Fields it does not know with an object
// for a value (OpenAI's completion_tokens_details) are left to the general
// decoder: a stream has one usage.
func (s *chunkScanner) usage(c *Completion) bool {
	if s.null() {
		return true
	}
	u := new(Usage)
	c.Usage = u
	return s.object(func(key []byte) (bit uint, ok bool) {
		ok = true
		switch string(key) {
		case "prompt_tokens":
			bit, ok = 1, s.int(&u.PromptTokens)
		case "completion_tokens":
			bit, ok = 2, s.int(&u.CompletionTokens)
		case "total_tokens":
			bit, ok = 4, s.int(&u.TotalTokens)
		case "prompt_cache_hit_tokens":
			bit, ok = 8, s.int(&u.PromptCacheHitTokens)
		case "prompt_tokens_details":
			bit = 16
			if !s.null() {
				u.PromptTokensDetails = new(TokenDetails)
				ok = s.details(u.PromptTokensDetails)
			}
		default:
			ok = s.unknown(key, usageKeys)
		}
		return bit, ok
	})
}

func (s *chunkScanner) details(t *TokenDetails) bool {
	return s.object(func(key []byte) (uint, bool) {
		if string(key) == "cached_tokens" {
			return 1, s.int(&t.CachedTokens)
		}
		return 0, s.unknown(key, detailsKeys)
	})
}
