package completion

import (
	"slices"
	"strings"
)

// turnHeaders are the stop sequences every call sends: where the model's
// turn ends and the next (a user's, or tool results) would begin.
var turnHeaders = []string{"\nUSER:", "\nTOOL:"}

// cutHeaders are the lines at which the text is cut: any turn header at the
// start of a line, the start of the text included.
var cutHeaders = []string{"\nSYSTEM:", "\nUSER:", "\nASSISTANT:", "\nTOOL:"}

// stopSequences returns the request's stop sequences (without empty ones
// and repeats) followed by the turn headers; with limit above zero, at most
// limit of them, the turn headers always among them.
func stopSequences(own []string, limit int) []string {
	var out []string
	for _, s := range own {
		if s != "" && !slices.Contains(out, s) && !slices.Contains(turnHeaders, s) {
			out = append(out, s)
		}
	}
	if limit > 0 && len(out) > limit-len(turnHeaders) {
		out = out[:max(limit-len(turnHeaders), 0)]
	}
	return append(out, turnHeaders...)
}

// cutter passes a model's text on up to the first line that starts with a
// turn header or the first of the request's stop sequences, leaving that
// out. It holds back the end of the text while it may be the beginning of
// one, so that a stream is cut where the whole text would be.
type cutter struct {
	stops []string
	// pending is the text not yet passed on. Until something is, it starts
	// with a newline of its own (virtual), so that a header at the very
	// start of the text is found too.
	pending string
	virtual bool
	// stopped reports that a stop sequence was found: nothing more passes.
	stopped bool
}

func newCutter(stops []string) *cutter {
	c := &cutter{stops: append([]string(nil), cutHeaders...), pending: "\n", virtual: true}
	for _, s := range stops {
		if s != "" && !slices.Contains(c.stops, s) {
			c.stops = append(c.stops, s)
		}
	}
	return c
}

// write takes the next piece of text and returns what can be passed on.
func (c *cutter) write(s string) string {
	if c.stopped {
		return ""
	}
	c.pending += s
	cut := -1
	for _, st := range c.stops {
		from := 0
		if c.virtual && !slices.Contains(cutHeaders, st) {
			from = 1 // the virtual newline counts for turn headers only
		}
		if i := strings.Index(c.pending[from:], st); i >= 0 && (cut < 0 || from+i < cut) {
			cut = from + i
		}
	}
	if cut >= 0 {
		c.stopped = true
		return c.take(cut)
	}
	keep := 0
	for _, st := range c.stops {
		for k := min(len(st)-1, len(c.pending)); k > keep; k-- {
			if strings.HasSuffix(c.pending, st[:k]) {
				keep = k
				break
			}
		}
	}
	return c.take(len(c.pending) - keep)
}

// flush returns the text held back: the text has ended.
func (c *cutter) flush() string {
	if c.stopped {
		return ""
	}
	return c.take(len(c.pending))
}

// take passes on pending[:n], without the virtual newline.
func (c *cutter) take(n int) string {
	out := c.pending[:n]
	c.pending = c.pending[n:]
	if c.virtual && n > 0 {
		out, c.virtual = out[1:], false
	}
	if c.stopped {
		c.pending = ""
	}
	return out
}
