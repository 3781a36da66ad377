package jsonfast

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// valueSeeds are JSON texts, valid and not: every kind of value, escapes,
// surrogates (paired, lone, reversed), invalid UTF-8, U+2028, HTML
// characters, numbers at the edges of the grammar and of int64 and
// float64, nesting, and the mistakes encoding/json refuses.
var valueSeeds = []string{
	`"plain"`, `""`, `"a\"b\\c\/d\be\ff\ng\rh\ti"`, `"\u0041\u00e9\u4e2d\ud83d\ude00"`,
	`"\ud83d"`, `"\ud83d\u0041"`, `"\udc00\ud83d"`, `"\ud83d\ude0"`, `"x\ud83d\ude00y"`,
	"\"caf\xc3\xa9 \xff\xfe bad\"", "\"\xed\xa0\x80 surrogate in UTF-8\"", "\"line\u2028sep\u2029\"",
	`"<tag> & 'quote'"`, "\"ctl \x01\"", `"bad \x escape"`, `"unterminated`, `"tab	raw"`,
	`0`, `-0`, `1`, `-1`, `12.5`, `1e3`, `1E+3`, `-1.5e-7`, `01`, `1.`, `.5`, `-`, `1e`, `+1`,
	`9223372036854775807`, `9223372036854775808`, `-9223372036854775808`, `1e400`, `4.9e-324`,
	`true`, `false`, `null`, `tru`, `nul`, `truex`, `nullnull`,
	`{}`, `[]`, `{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, ` { "a" : [ 1 , 2 ] } `,
	`{"a":1,}`, `[1,]`, `{"a" 1}`, `{a:1}`, `[1 2]`, `{"a":1}x`, `[[[[[[[[[[]]]]]]]]]]`,
	`{"k\u0065y":1}`, "{\"\xff\":1}", `{"":""}`,
}

// TestSkip: a Reader accepts exactly the texts encoding/json finds valid.
func TestSkip(t *testing.T) {
	for _, s := range valueSeeds {
		checkSkip(t, []byte(s))
	}
	deep := strings.Repeat("[", 2000) + strings.Repeat("]", 2000)
	r := NewReader([]byte(deep))
	if r.Skip() {
		t.Error("nesting past maxDepth was read, not left to encoding/json")
	}
}

func checkSkip(t *testing.T, data []byte) {
	t.Helper()
	r := NewReader(data)
	fast := r.Skip() && r.End()
	if fast && !json.Valid(data) {
		t.Fatalf("Reader read %q, which encoding/json finds invalid", data)
	}
	if !fast && json.Valid(data) && !bytes.Contains(data, []byte(strings.Repeat("[", maxDepth))) && !bytes.Contains(data, []byte(strings.Repeat("{", maxDepth))) {
		t.Fatalf("Reader refused %q, which encoding/json finds valid", data)
	}
}

func FuzzReader(f *testing.F) {
	for _, s := range valueSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSkip(t, data)
		checkString(t, data)
		checkNumbers(t, data)
		checkCompact(t, data)
	})
}

// TestString: strings read to what encoding/json reads.
func TestString(t *testing.T) {
	for _, s := range valueSeeds {
		checkString(t, []byte(s))
	}
}

func checkString(t *testing.T, data []byte) {
	t.Helper()
	var fast, slow string
	r := NewReader(data)
	if !r.String(&fast) || !r.End() {
		return
	}
	if err := json.Unmarshal(data, &slow); err != nil {
		t.Fatalf("String read %q, which encoding/json refuses: %v", data, err)
	}
	if fast != slow {
		t.Fatalf("String read %q as %q, encoding/json as %q", data, fast, slow)
	}
}

// TestNumbers: ints and floats read to what encoding/json reads, and
// refused where it refuses them.
func TestNumbers(t *testing.T) {
	for _, s := range valueSeeds {
		checkNumbers(t, []byte(s))
	}
}

func checkNumbers(t *testing.T, data []byte) {
	t.Helper()
	var fi, si int
	r := NewReader(data)
	ok := r.Int(&fi) && r.End()
	err := json.Unmarshal(data, &si)
	if ok != (err == nil && bytes.ContainsAny(bytes.TrimSpace(data)[:1], "-0123456789")) || ok && fi != si {
		t.Fatalf("Int read %q as %d (%v), encoding/json as %d (%v)", data, fi, ok, si, err)
	}
	var ff, sf float64
	r = NewReader(data)
	ok = r.Float(&ff) && r.End()
	err = json.Unmarshal(data, &sf)
	if ok && (err != nil || ff != sf) {
		t.Fatalf("Float read %q as %v, encoding/json as %v (%v)", data, ff, sf, err)
	}
}

// TestCompact: a raw value is written as encoding/json writes a
// json.RawMessage, with and without HTML escaping.
func TestCompact(t *testing.T) {
	for _, s := range valueSeeds {
		checkCompact(t, []byte(s))
	}
}

func checkCompact(t *testing.T, data []byte) {
	t.Helper()
	for _, html := range []bool{false, true} {
		fast, ok := AppendCompact([]byte("x"), data, html)
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		err := enc.Encode(json.RawMessage(data))
		if ok != (err == nil) {
			t.Fatalf("AppendCompact(%q, %v) ok %v, encoding/json: %v", data, html, ok, err)
		}
		if ok && string(fast[1:])+"\n" != b.String() {
			t.Fatalf("AppendCompact(%q, %v) = %q, encoding/json %q", data, html, fast[1:], b.String())
		}
	}
}

// stringSeeds are texts to write: every class of byte a string may hold.
var stringSeeds = []string{
	"", "plain ASCII text, longer than eight bytes", "quote \" backslash \\ slash /",
	"\b\f\n\r\t\x00\x01\x1f\x7f", "<PTK_CALL>{\"a\": 1}</PTK_CALL> & more", "café 中文 😀",
	"\xff\xfe invalid \xc3", "sep\u2028par\u2029", "\xe2\x80", "12345678<", "1234567\xe2\x80\xa8",
}

// TestAppendString: strings are written as encoding/json writes them.
func TestAppendString(t *testing.T) {
	for _, s := range stringSeeds {
		checkAppendString(t, s)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s)
	}
	f.Fuzz(checkAppendString)
}

func checkAppendString(t *testing.T, s string) {
	for _, html := range []bool{false, true} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(b.String(), "\n")
		if got := string(AppendString([]byte("x"), s, html))[1:]; got != want {
			t.Fatalf("AppendString(%q, %v) = %s, encoding/json %s", s, html, got, want)
		}
		if got := string(AppendString(nil, []byte(s), html)); got != want {
			t.Fatalf("AppendString([]byte %q, %v) = %s, encoding/json %s", s, html, got, want)
		}
	}
}

// TestAppendFloat: floats are written as encoding/json writes them, and
// refused where it refuses them.
func TestAppendFloat(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 0.2, 1e-6, 9.99e-7, 1e20, 1e21, 123456789.125, 5e-324, math.MaxFloat64, math.Inf(1), math.NaN()} {
		got, ok := AppendFloat(nil, f)
		want, err := json.Marshal(f)
		if ok != (err == nil) || ok && string(got) != string(want) {
			t.Errorf("AppendFloat(%v) = %s %v, encoding/json %s %v", f, got, ok, want, err)
		}
	}
}

// TestStruct: keys that name a field in another case, or twice, are left
// to encoding/json; others are skipped.
func TestStruct(t *testing.T) {
	fields := NewFields("model", "stream")
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`{"model":"m","stream":true,"other":[1,{"x":2}]}`, true},
		{`{"Model":"m"}`, false},
		{`{"model":"m","model":"n"}`, false},
		{"{\"\u017ftream\":true}", false}, // ſ folds to s, as encoding/json folds it
		{`{"modelx":"m"}`, true},
	} {
		r := NewReader([]byte(tc.in))
		var model string
		var stream bool
		ok := r.Struct(fields, func(i int) bool {
			if i == 0 {
				return r.String(&model)
			}
			return r.Bool(&stream)
		}) && r.End()
		if ok != tc.ok {
			t.Errorf("%s: read %v, want %v", tc.in, ok, tc.ok)
		}
	}
}
