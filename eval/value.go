package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Dict is a JSON object, its keys in the order written. Two Dicts are
// equal, as Python's dicts are, when they have the same keys with equal
// values, in any order.
type Dict struct {
	Keys []string
	Vals []any
}

// Get returns the value of key k.
func (d *Dict) Get(k string) (any, bool) {
	for i, key := range d.Keys {
		if key == k {
			return d.Vals[i], true
		}
	}
	return nil, false
}

// Set sets key k to v, adding it at the end when it is new.
func (d *Dict) Set(k string, v any) {
	for i, key := range d.Keys {
		if key == k {
			d.Vals[i] = v
			return
		}
	}
	d.Keys = append(d.Keys, k)
	d.Vals = append(d.Vals, v)
}

// Decode reads JSON the way Python's json module does, which is what BFCL's
// checker sees: a number written with a fraction or an exponent is a float
// (float64), any other an int (int64; a float64 when it does not fit), an
// object a *Dict with its keys in order (a repeated key keeps its last
// value, in its first place), an array []any, and strings, booleans and
// null as themselves.
func Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("eval: more than one JSON value")
	}
	return v, nil
}

const maxDepth = 200

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("eval: JSON nested too deep")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		case '{':
			d := &Dict{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				d.Set(k.(string), v)
			}
			_, err := dec.Token()
			return d, err
		}
		return nil, fmt.Errorf("eval: unexpected %v", t)
	case json.Number:
		return number(string(t)), nil
	}
	return tok, nil
}

// number is a JSON number as Python reads it.
func number(s string) any {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// pyType is the name of v's Python type.
func pyType(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case int64:
		return "int"
	case float64:
		return "float"
	case []any:
		return "list"
	case *Dict:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

// numeric returns v as a number when Python compares it as one (bool is an
// int in Python: True == 1).
func numeric(v any) (float64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// pyEqual is Python's == on decoded values.
func pyEqual(a, b any) bool {
	if x, ok := numeric(a); ok {
		y, ok := numeric(b)
		if !ok {
			return false
		}
		if ai, ok := a.(int64); ok {
			if bi, ok := b.(int64); ok {
				return ai == bi
			}
		}
		return x == y && !math.IsNaN(x)
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Dict:
		y, ok := b.(*Dict)
		if !ok || len(x.Keys) != len(y.Keys) {
			return false
		}
		for i, k := range x.Keys {
			yv, ok := y.Get(k)
			if !ok || !pyEqual(x.Vals[i], yv) {
				return false
			}
		}
		return true
	}
	return false
}

// pyIn is Python's "v in list".
func pyIn(v any, list []any) bool {
	for _, e := range list {
		if pyEqual(v, e) {
			return true
		}
	}
	return false
}

// pyRepr writes v about as Python's repr does, for messages.
func pyRepr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case string:
		b.WriteString(strconv.Quote(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		b.WriteString(s)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e)
		}
		b.WriteByte(']')
	case *Dict:
		b.WriteByte('{')
		for i, k := range x.Keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(k))
			b.WriteString(": ")
			writeRepr(b, x.Vals[i])
		}
		b.WriteByte('}')
	default:
		fmt.Fprint(b, x)
	}
}

// MarshalJSON writes the dict with its keys in order.
func (d *Dict) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range d.Keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshalValue(d.Vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalValue writes a decoded value as JSON, a float always with a
// fraction or an exponent so that it reads back as a float.
func marshalValue(v any) ([]byte, error) {
	switch x := v.(type) {
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, errors.New("eval: a number JSON cannot hold")
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return []byte(s), nil
	case []any:
		var b bytes.Buffer
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			eb, err := marshalValue(e)
			if err != nil {
				return nil, err
			}
			b.Write(eb)
		}
		b.WriteByte(']')
		return b.Bytes(), nil
	}
	return json.Marshal(v)
}

// EncodeJSON writes a decoded value as JSON: numbers keep their Python
// type (5.0 stays a float), objects their key order.
func EncodeJSON(v any) ([]byte, error) { return marshalValue(v) }
