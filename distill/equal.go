package distill

import (
	"bytes"
	"encoding/json"
	"math/big"
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
