package ptool

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/ptkit/ptk/lenient"
	"github.com/ptkit/ptk/schema"
)

// answer is what reading one reply gave: the value, or the model's reason
// for abstaining, or the problems that make it unusable.
type answer struct {
	json      []byte // the value as compact JSON
	repairs   []string
	problems  []string
	abstained bool
	reason    string
}

// readText reads an answer a model wrote as text (protocol mode): between
// <answer> tags, else in a code fence, else the whole reply; leniently, as
// JSON, or as the string it spells when the output is a string. The last
// <answer> or <cannot_answer> element the model opened decides whether it
// answered or abstained: a tag it mentions in prose before its real answer,
// or inside the other element, does not.
func (s *Spec) readText(text string) answer {
	var a answer
	text = stripThink(text)
	el := lastElement(text)
	if el.abstain {
		reason := text[el.body:]
		if k, _ := indexFold(reason, "</cannot_answer>"); k >= 0 {
			reason = reason[:k]
		}
		return answer{abstained: true, reason: strings.TrimSpace(reason)}
	}
	inner := text
	if el.body >= 0 {
		inner = text[el.body:]
		if k, _ := indexFold(inner, "</answer>"); k >= 0 {
			inner = inner[:k]
		} else {
			a.repairs = append(a.repairs, "the closing </answer> is missing")
		}
		if fenced, ok := unfence(inner); ok {
			inner = fenced
			a.repairs = append(a.repairs, "read from a code fence")
		}
	} else if fenced, ok := unfence(text); ok {
		inner = fenced
		a.repairs = append(a.repairs, "read from a code fence")
	}
	inner = strings.TrimSpace(inner)
	if inner == "" {
		a.problems = []string{"the answer is empty: write the output between <answer> and </answer>"}
		return a
	}
	src := []byte(inner)
	n, rep, err := lenient.Parse(src)
	switch {
	case err == nil:
		a.repairs = append(a.repairs, rep.Strings()...)
	case s.textOut:
		n = &lenient.Node{Kind: lenient.String, Str: inner}
		a.repairs = append(a.repairs, "the text read as the string it spells")
	default:
		n = findValue(src)
		if n != nil {
			a.repairs = append(a.repairs, "the prose around the JSON left out")
		} else {
			// a scalar written as a word ("0.95", "3 out of 5"): coercion
			// reads it if it is one, and says why not otherwise
			n = &lenient.Node{Kind: lenient.String, Str: inner}
		}
	}
	return s.check(a, n, src)
}

// element is the <answer> or <cannot_answer> element that decides a reply:
// body is where its content starts (-1: the reply has neither tag).
type element struct {
	abstain bool
	body    int
}

// lastElement finds the element that decides a reply: the last <answer> or
// <cannot_answer> the model opened, where tags inside a closed element are
// its data, and a tag never closed counts only when no other follows it (a
// mention in prose, or an element cut off at the end).
func lastElement(text string) element {
	el := element{body: -1}
	lastClose := map[string]int{"</answer>": lastIndexFold(text, "</answer>"), "</cannot_answer>": lastIndexFold(text, "</cannot_answer>")}
	for i := 0; i < len(text); {
		k := strings.IndexByte(text[i:], '<')
		if k < 0 {
			break
		}
		i += k
		open, closer, abstain := "<answer>", "</answer>", false
		if hasPrefixFold(text[i:], "<cannot_answer>") {
			open, closer, abstain = "<cannot_answer>", "</cannot_answer>", true
		} else if !hasPrefixFold(text[i:], open) {
			i++
			continue
		}
		el = element{abstain: abstain, body: i + len(open)}
		i = el.body
		if lastClose[closer] >= i {
			_, end := indexFold(text[i:], closer)
			i += end
		}
	}
	return el
}

// lastIndexFold is the start of the last match of tag (lower case) in s in
// any letter case, or -1.
func lastIndexFold(s, tag string) int {
	for i := strings.LastIndexByte(s, '<'); i >= 0; i = strings.LastIndexByte(s[:i], '<') {
		if hasPrefixFold(s[i:], tag) {
			return i
		}
	}
	return -1
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// readStructured reads the JSON a provider's structured output gave:
// {"answer": …} or {"cannot_answer": "why"}. Servers that take the request
// for structured output and ignore it let the model write what it likes:
// an answer between <answer> tags reads as in protocol mode, and a bare
// output reads when it fits the schema exactly, each with a repair saying
// so. enveloped reports that the reply was the object asked for; false
// says the server ignores structured output.
func (s *Spec) readStructured(raw string) (a answer, enveloped bool) {
	text := stripThink(raw)
	if lastElement(text).body >= 0 {
		a = s.readText(text)
		a.repairs = append([]string{`read from <answer> tags: the reply is not an {"answer": …} object`}, a.repairs...)
		return a, false
	}
	if fenced, ok := unfence(text); ok {
		text = fenced
		a.repairs = append(a.repairs, "read from a code fence")
	}
	trimmed := strings.TrimSpace(text)
	src := []byte(trimmed)
	n, rep, err := lenient.Parse(src)
	if err == nil {
		a.repairs = append(a.repairs, rep.Strings()...)
	} else if n = findValue(src); n != nil {
		a.repairs = append(a.repairs, "the prose around the JSON left out")
	}
	if n != nil && n.Kind == lenient.Object {
		v := n.Get("answer")
		if r := n.Get("cannot_answer"); r != nil && r.Kind == lenient.String && (v == nil || v.Kind == lenient.Null) {
			return answer{abstained: true, reason: strings.TrimSpace(r.Str)}, true
		}
		if v != nil {
			return s.check(a, v, src), true
		}
	}
	if n == nil && s.textOut && trimmed != "" {
		n = &lenient.Node{Kind: lenient.String, Str: trimmed}
	}
	if n != nil && s.fits(n) {
		a.repairs = append(a.repairs, `the output written bare, without its {"answer": …} object`)
		return s.check(a, n, src), false
	}
	if n == nil || n.Kind != lenient.Object {
		a.problems = []string{`the reply is not a JSON object {"answer": …}`}
	} else {
		a.problems = []string{`the reply has no "answer" field`}
	}
	return a, false
}

// fits reports whether n is an output as it is, without coercion: a bare
// output is taken only when there is no doubt.
func (s *Spec) fits(n *lenient.Node) bool {
	return s.out == nil || s.out.Quick(n) || len(s.out.Check(n)) == 0
}

// check coerces a value read from src to the output schema, recording what
// it changed, and checks it.
func (s *Spec) check(a answer, n *lenient.Node, src []byte) answer {
	if s.out != nil && !s.out.Quick(n) {
		var notes []schema.Note
		n, notes = s.out.Coerce(n, false)
		for _, nt := range notes {
			a.repairs = append(a.repairs, outputMessage(nt.Message))
		}
		for _, nt := range s.out.Check(n) {
			a.problems = append(a.problems, outputMessage(nt.Message))
		}
		if len(a.problems) > 0 {
			return a
		}
	}
	a.json = lenient.AppendJSON(nil, n, src)
	// clean values are copied as written: make the whole compact
	var b bytes.Buffer
	if json.Compact(&b, a.json) == nil {
		a.json = b.Bytes()
	}
	return a
}

// outputMessage words a schema note about "arguments" as one about the output.
func outputMessage(msg string) string {
	if rest, ok := strings.CutPrefix(msg, "arguments"); ok {
		return "the output" + rest
	}
	return msg
}

// findValue finds the first JSON object or array in prose.
func findValue(src []byte) *lenient.Node {
	for i, c := range src {
		if c != '{' && c != '[' {
			continue
		}
		r := lenient.NewReader(i, true)
		if r.Feed(src, true) == lenient.Done && r.Root != nil {
			return r.Root
		}
	}
	return nil
}

// unfence returns the body of the first ``` code fence in s.
func unfence(s string) (string, bool) {
	i := strings.Index(s, "```")
	if i < 0 {
		return "", false
	}
	body := s[i+3:]
	nl := strings.IndexByte(body, '\n')
	if nl < 0 {
		return "", false
	}
	if lang := strings.TrimSpace(body[:nl]); strings.ContainsAny(lang, " {[\"") {
		return "", false
	}
	body = body[nl+1:]
	if j := strings.Index(body, "```"); j >= 0 {
		body = body[:j]
	}
	return body, true
}

// stripThink removes <think>…</think> reasoning from a reply.
func stripThink(s string) string {
	for {
		i, _ := indexFold(s, "<think>")
		if i < 0 {
			return s
		}
		_, j := indexFold(s[i:], "</think>")
		if j < 0 {
			return s[:i]
		}
		s = s[:i] + s[i+j:]
	}
}

// indexFold finds tag (lower case) in s in any letter case: the start of
// the match and the index just after it, or -1, -1.
func indexFold(s, tag string) (int, int) {
	if i := strings.Index(s, tag); i >= 0 {
		return i, i + len(tag)
	}
	for i := strings.IndexByte(s, '<'); i >= 0 && i+len(tag) <= len(s); {
		if strings.EqualFold(s[i:i+len(tag)], tag) {
			return i, i + len(tag)
		}
		k := strings.IndexByte(s[i+1:], '<')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return -1, -1
}
