package dialect

// Calls between special tokens: Kimi K2 and DeepSeek.

import (
	"bytes"
	"github.com/ptkit/ptk/dialect/internal/markup"
	"github.com/ptkit/ptk/dialect/result"
	"github.com/ptkit/ptk/dialect/tag"
	"github.com/ptkit/ptk/lenient"
	"strings"
)

// tokenCall is a call between special tokens: Kimi's
// <|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{...}<|tool_call_end|>,
// DeepSeek's <｜tool▁call▁begin｜>function<｜tool▁sep｜>name ```json {...}```<｜tool▁call▁end｜>
// (or name<｜tool▁sep｜>{...}), and Step-3's XML after the separator. JSON
// arguments are read by their structure: an end token inside a string
// argument is part of the string.
type tokenCall struct {
	start, body int
	phase       int
	pos         int
	name        string
	f           tag.Finder
	jp          *lenient.Reader
	began       bool
	sent        int
	repairs     []string
}

// tokenCallEnds end a token call. The first of them close the call and are
// skipped; the others (a section's end, the next call's start) belong to
// what follows.
var tokenCallEnds = markup.Tokens("tool_call_end", "tool_calls_section_end", "tool_calls_end", "tool_call_begin")

var tokenCallEndsOwn = len(markup.Tokens("tool_call_end"))

// fullBar starts DeepSeek's special tokens.
const fullBar = "<｜"

// fencedCallEnds end JSON in a fence inside a token call.
var fencedCallEnds = append([]string{"```"}, tokenCallEnds...)

func consumedEnd(k int) bool { return k < tokenCallEndsOwn }

func (r *tokenCall) advance(m *machine) bool {
	buf := m.buf
	if !r.began {
		r.began = true
		m.beginCall("")
		r.f = tag.Finder{Pats: append(append([]string{}, markup.TokenSeps...), tokenCallEnds...), At: r.body}
		r.sent = r.body
	}
	for {
		switch r.phase {
		case 0: // the header, up to the separator
			if i, need, _ := m.skipWS(r.body, maxLook); need {
				return false
			} else if i < len(buf) && buf[i] == '<' {
				rest := buf[i:]
				if !m.eof && len(rest) < len(fullBar) && (bytes.HasPrefix([]byte(fullBar), rest) || bytes.HasPrefix([]byte("<|"), rest)) {
					return false // a special token or not: wait for it
				}
				if !bytes.HasPrefix(rest, []byte("<|")) && !bytes.HasPrefix(rest, []byte(fullBar)) {
					r.pos, r.phase = i, 4 // Step-3's XML with no header: <steptml:invoke name="x">
					continue
				}
			}
			idx, k := r.f.Find(buf, m.eof)
			if idx < 0 {
				r.delta(m, r.f.At)
				if !m.eof {
					return false
				}
				return r.bad(m, len(buf), result.DiagTruncated, "the call is cut off before its arguments")
			}
			if k >= len(markup.TokenSeps) { // an end token before any separator
				end := idx
				if consumedEnd(k - len(markup.TokenSeps)) {
					end += len(tokenCallEnds[k-len(markup.TokenSeps)])
				}
				return r.bad(m, end, result.DiagMalformed, "the call has no arguments")
			}
			header := strings.TrimSpace(string(buf[r.body:idx]))
			r.pos = idx + len(markup.TokenSeps[k])
			if header == "function" || header == "" {
				r.phase = 1 // DeepSeek R1: the name is on the next line
			} else {
				r.name = markup.TokenName(header)
				r.phase = 2
			}
		case 1: // DeepSeek R1's name line, or Step-3's XML
			i, need, _ := m.skipWS(r.pos, maxLook)
			if need {
				return false
			}
			if i < len(buf) && buf[i] == '<' {
				r.phase = 4
				continue
			}
			nl := i
			for nl < len(buf) && buf[nl] != '\n' && nl-i < maxLook {
				nl++
			}
			if nl >= len(buf) && !m.eof {
				return false
			}
			r.name = markup.TokenName(string(buf[i:nl]))
			r.pos, r.phase = nl, 2
		case 2: // the arguments: JSON, maybe fenced
			i, need, _ := m.skipWS(r.pos, maxLook)
			if need {
				return false
			}
			fenced := false
			if i+3 <= len(buf) && (string(buf[i:i+3]) == "```" || string(buf[i:i+3]) == "~~~") {
				fenced = true
				for i < len(buf) && buf[i] != '\n' {
					i++
				}
				if i, need, _ = m.skipWS(i, maxLook); need {
					return false
				}
			} else if i < len(buf) && i+3 > len(buf) && !m.eof && (buf[i] == '`' || buf[i] == '~') {
				return false
			}
			if i < len(buf) && (buf[i] == '{' || buf[i] == '[') {
				r.jp = m.newJParser(i, false)
				r.jp.Closers = tokenCallEnds // {"city": "Beijing"<|tool_call_end|>: the braces are missing
				if fenced {
					r.jp.Closers = fencedCallEnds
				}
				r.phase = 3
				continue
			}
			r.phase = 4 // not JSON: read to the end token
		case 3:
			st := r.jp.Feed(buf, m.eof)
			r.delta(m, r.jp.Pos)
			switch st {
			case lenient.Need:
				return false
			case lenient.Fail:
				if r.jp.Truncated {
					return r.bad(m, len(buf), result.DiagTruncated, "the call is cut off before its JSON ends")
				}
				r.phase = 4
				continue
			}
			// after the JSON: a closing fence, then the end token
			i, need, _ := m.skipWS(r.jp.End, maxLook)
			if need {
				return false
			}
			if i+3 <= len(buf) && (string(buf[i:i+3]) == "```" || string(buf[i:i+3]) == "~~~") {
				if i, need, _ = m.skipWS(i+3, maxLook); need {
					return false
				}
			} else if i < len(buf) && i+3 > len(buf) && !m.eof && (buf[i] == '`' || buf[i] == '~') {
				return false
			}
			end := r.jp.End
			found := false
			for k, e := range tokenCallEnds {
				match, need := lenient.HasPrefixFold(buf, i, e, m.eof)
				if need {
					return false
				}
				if match {
					found = true
					if consumedEnd(k) {
						end = i + len(e)
					}
					break
				}
			}
			if !found {
				r.repairs = append(r.repairs, "missing end token: the call ends where its JSON ends")
			}
			rc := RawCall{Name: r.name, Args: r.jp.Root, Src: buf, Offset: r.start, Repairs: append(r.jp.Rep.Strings(), r.repairs...)}
			m.addCalls([]RawCall{rc})
			m.pos = end
			return true
		case 4: // read to the end token, then parse what is there
			r.f = tag.Finder{Pats: tokenCallEnds, At: r.pos}
			r.phase = 5
		case 5:
			idx, k := r.f.Find(buf, m.eof)
			if idx < 0 {
				r.delta(m, r.f.At)
				if !m.eof {
					return false
				}
				idx, k = len(buf), -1
			}
			r.delta(m, idx)
			rc := rawOf(markup.TokenCall(buf[r.body:idx], r.start))
			if k < 0 && rc.Err == "" {
				rc.Err, rc.ErrMsg = result.DiagTruncated, "the call is cut off before its end token"
			}
			m.addCalls([]RawCall{rc})
			m.pos = idx
			if k >= 0 && consumedEnd(k) {
				m.pos = idx + len(tokenCallEnds[k])
			}
			return true
		}
	}
}

func (r *tokenCall) delta(m *machine, upto int) {
	if upto > r.sent {
		m.callDelta(m.buf[r.sent:upto])
		r.sent = upto
	}
}

func (r *tokenCall) bad(m *machine, end int, k result.DiagKind, msg string) bool {
	r.delta(m, end)
	m.addCalls([]RawCall{{Name: r.name, Offset: r.start, Err: k, ErrMsg: msg}})
	m.pos = end
	return true
}
