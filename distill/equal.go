package distill

import (
	"bytes"
	"encoding/json"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

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

// canonical is a JSON value's text such that two values are Equal exactly
// when their canonical texts are equal: keys sorted, numbers as exact
// rationals. ok is false for invalid JSON.
func canonical(raw json.RawMessage) (string, bool) {
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
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for _, k := range keys {
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
