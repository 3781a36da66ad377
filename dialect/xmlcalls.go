package dialect

// Calls written in XML: Qwen3-Coder, Claude and MiniMax invoke, DeepSeek
// DSML, Step-3, GLM and LongCat arguments, and Gemma 4's call:name{...}.

import (
	"github.com/ptkit/ptk/dialect/internal/markup"
	"github.com/ptkit/ptk/dialect/result"
	"github.com/ptkit/ptk/dialect/tag"
	"github.com/ptkit/ptk/lenient"
)

// xmlCall is a call in XML written without a wrapper:
// <function=name>...</function>, <invoke name="x">...</invoke>.
type xmlCall struct {
	start   int
	tool    string // <tool>...</tool>: a call of the tool the tag names (Cline's XML)
	kimi    bool   // Kimi-K3's <|open|>tools<|sep|>...
	body    int    // with tool: where the body starts
	closers []string
	began   bool
	xs      markup.Scan
	sent    int
}

func (r *xmlCall) advance(m *machine) bool {
	buf := m.buf
	if !r.began {
		r.began = true
		m.beginCall("")
		r.xs = markup.Scan{At: r.start + 1, Closers: r.closers}
		r.sent = r.start
	}
	idx, k := r.xs.Find(buf, m.eof)
	upto := r.xs.At
	if idx >= 0 {
		upto = idx + len(r.closers[k])
	}
	if upto > r.sent {
		m.callDelta(buf[r.sent:upto])
		r.sent = upto
	}
	if idx < 0 {
		if !m.eof {
			return false
		}
		raws, complete := rawsOf(r.read(buf, len(buf), len(buf)))
		if !complete {
			m.addCalls([]RawCall{{Name: firstName(raws), Offset: r.start, Err: result.DiagTruncated, ErrMsg: "the call is cut off before it ends"}})
		} else {
			m.addCalls(raws)
		}
		m.pos = len(buf)
		return true
	}
	raws, _ := rawsOf(r.read(buf, idx, upto))
	m.addCalls(raws)
	m.pos = upto
	return true
}

// read reads the calls, their closer at buf[closer:end]; a tool's tag is
// read as the <function=tool> it means.
func (r *xmlCall) read(buf []byte, closer, end int) ([]markup.Call, bool) {
	switch {
	case r.kimi:
		return markup.KimiK3(buf[r.start:end], r.start)
	case r.tool == "":
		return markup.XMLCalls(buf[r.start:end], r.start)
	}
	b := append([]byte("<function="+r.tool+">"), buf[r.body:closer]...)
	if closer < end {
		b = append(b, "</function>"...)
	}
	return markup.XMLCalls(b, r.start)
}

func firstName(raws []RawCall) string {
	if len(raws) > 0 {
		return raws[0].Name
	}
	return ""
}

// glmInline is GLM's call written without a wrapper:
// name<arg_key>k</arg_key><arg_value>v</arg_value>...
type glmInline struct {
	start int // the name
	at    int // the first <arg_key>
	phase int
	pos   int
	f     tag.Finder
	began bool
	sent  int
}

func (r *glmInline) advance(m *machine) bool {
	buf := m.buf
	if !r.began {
		r.began = true
		m.beginCall(string(buf[r.start:r.at]))
		r.sent = r.start
		r.f = tag.Finder{Pats: []string{"</arg_key>"}, At: r.at}
	}
	for {
		switch r.phase {
		case 0, 2: // inside a key or a value: find its end
			j, _ := r.f.Find(buf, m.eof)
			if j < 0 {
				return r.wait(m)
			}
			r.pos = j + len(r.f.Pats[0])
			r.phase++
		case 1: // after a key: its value
			i := r.pos
			for i < len(buf) && lenient.IsWS(buf[i]) && i-r.pos <= maxRunGap {
				i++
			}
			match, need := lenient.HasPrefixFold(buf, i, "<arg_value>", m.eof)
			if need {
				return r.wait(m)
			}
			if !match {
				return r.end(m, r.pos, false)
			}
			r.f = tag.Finder{Pats: []string{"</arg_value>"}, At: i}
			r.phase = 2
		case 3: // after a value: another key, or the end
			i := r.pos
			for i < len(buf) && lenient.IsWS(buf[i]) && i-r.pos <= maxRunGap {
				i++
			}
			match, need := lenient.HasPrefixFold(buf, i, "<arg_key>", m.eof)
			if need {
				return r.wait(m)
			}
			if !match {
				return r.end(m, r.pos, true)
			}
			r.f = tag.Finder{Pats: []string{"</arg_key>"}, At: i}
			r.phase = 0
		}
	}
}

func (r *glmInline) wait(m *machine) bool {
	if !m.eof {
		return false
	}
	m.addCalls([]RawCall{{Name: string(m.buf[r.start:r.at]), Offset: r.start, Err: result.DiagTruncated, ErrMsg: "the call is cut off before its arguments end"}})
	m.pos = len(m.buf)
	return true
}

func (r *glmInline) end(m *machine, end int, ok bool) bool {
	if end > r.sent {
		m.callDelta(m.buf[r.sent:end])
	}
	raws, _ := rawsOf(markup.GLM(m.buf[r.start:end], r.start, m.toolPrefix))
	if !ok {
		raws = []RawCall{{Name: string(m.buf[r.start:r.at]), Offset: r.start, Err: result.DiagMalformed, ErrMsg: "an <arg_key> without its <arg_value>"}}
	}
	m.addCalls(raws)
	m.pos = end
	return true
}

// rawsOf makes the calls markup read RawCalls; complete passes through.
func rawsOf(cs []markup.Call, complete bool) ([]RawCall, bool) {
	out := make([]RawCall, len(cs))
	for i, c := range cs {
		out[i] = rawOf(c)
	}
	return out, complete
}

// rawOf makes a call markup read a RawCall.
func rawOf(c markup.Call) RawCall {
	rc := RawCall{Name: c.Name, Args: c.Args, TextArgs: c.TextArgs, Offset: c.Offset, Repairs: c.Repairs}
	switch {
	case c.Cut:
		rc.Err, rc.ErrMsg = result.DiagTruncated, c.Err
	case c.Err != "":
		rc.Err, rc.ErrMsg = result.DiagMalformed, c.Err
	}
	return rc
}
