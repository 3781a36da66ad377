// Package score judges a function's answers against the answers wanted,
// and evaluates ptools on datasets: the one scorer that 'ptk ptool eval'
// and the distiller's gate share. An answer is correct when it fits the
// output's schema and equals the answer wanted as JSON Schema compares
// values (Equal): numbers by value, objects whatever their keys' order.
package score

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/ptkit/ptk/schema"
)

// The verdicts on an answer.
const (
	Correct   = "correct"   // it fits the schema and equals the answer wanted
	Wrong     = "wrong"     // it does not fit, or differs, or the call failed
	Abstained = "abstained" // no answer: the function said it cannot
)

// Judge judges got, an answer, against want for the output schema out
// (nil: any value fits): Correct, or Wrong with why (the schema's
// problems; "" when it differs).
func Judge(out *schema.Schema, want, got json.RawMessage) (verdict, why string) {
	if out != nil {
		if err := out.Validate(got); err != nil {
			return Wrong, "does not fit the output schema: " + err.Error()
		}
	}
	if Equal(got, want) {
		return Correct, ""
	}
	return Wrong, ""
}

// Equal reports whether two JSON values are equal as JSON Schema compares
// them (enum, const): numbers by value (1 equals 1.0), objects whatever
// the order of their keys, arrays element by element. Invalid JSON is
// equal to nothing.
func Equal(a, b json.RawMessage) bool {
	va, ok := decode(a)
	if !ok {
		return false
	}
	vb, ok := decode(b)
	if !ok {
		return false
	}
	return equal(va, vb)
}

func decode(raw json.RawMessage) (any, bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

func equal(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		ra, ok1 := new(big.Rat).SetString(a.String())
		rb, ok2 := new(big.Rat).SetString(b.String())
		return ok1 && ok2 && ra.Cmp(rb) == 0
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equal(a[i], b[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

// Canonical is a JSON value's text such that two values are Equal exactly
// when their canonical texts are equal: keys sorted, numbers as exact
// rationals. ok is false for invalid JSON.
func Canonical(raw json.RawMessage) (string, bool) {
	v, ok := decode(raw)
	if !ok {
		return "", false
	}
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String(), true
}

func writeCanonical(b *strings.Builder, v any) {
	switch v := v.(type) {
	case json.Number:
		if r, ok := new(big.Rat).SetString(v.String()); ok {
			b.WriteString("n" + r.RatString())
		} else {
			b.WriteString("n?" + v.String())
		}
	case string:
		b.WriteString("s" + strconv.Quote(v))
	case map[string]any:
		b.WriteByte('{')
		for _, k := range slices.Sorted(maps.Keys(v)) {
			b.WriteString(strconv.Quote(k) + ":")
			writeCanonical(b, v[k])
			b.WriteByte(',')
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for _, e := range v {
			writeCanonical(b, e)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	}
}

// Diff lists where got differs from want, a line each: "/path: want X,
// got Y", "/path: missing", "/path: not wanted"; at most max lines (0: all).
func Diff(want, got json.RawMessage, max int) []string {
	w, ok1 := decode(want)
	g, ok2 := decode(got)
	if !ok1 || !ok2 {
		return []string{fmt.Sprintf("want %s, got %s", want, got)}
	}
	var out []string
	diff(&out, "", w, g, max)
	return out
}

func diff(out *[]string, at string, w, g any, max int) {
	if max > 0 && len(*out) >= max {
		return
	}
	if equal(w, g) {
		return
	}
	switch wv := w.(type) {
	case map[string]any:
		if gv, ok := g.(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(wv)) {
				p := at + "/" + escape(k)
				if x, ok := gv[k]; ok {
					diff(out, p, wv[k], x, max)
				} else if max <= 0 || len(*out) < max {
					*out = append(*out, p+": missing (want "+show(wv[k])+")")
				}
			}
			for _, k := range slices.Sorted(maps.Keys(gv)) {
				if _, ok := wv[k]; !ok && (max <= 0 || len(*out) < max) {
					*out = append(*out, at+"/"+escape(k)+": not wanted (got "+show(gv[k])+")")
				}
			}
			return
		}
	case []any:
		if gv, ok := g.([]any); ok && len(gv) == len(wv) {
			for i := range wv {
				diff(out, at+"/"+strconv.Itoa(i), wv[i], gv[i], max)
			}
			return
		}
	}
	where := at
	if where == "" {
		where = "the output"
	}
	*out = append(*out, where+": want "+show(w)+", got "+show(g))
}

func escape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// show writes a decoded value as compact JSON, cut short when long.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if s := []rune(string(b)); len(s) > 80 {
		return string(s[:77]) + "..."
	}
	return string(b)
}
