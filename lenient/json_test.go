package lenient

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestRepairJSON(t *testing.T) {
	cases := []struct {
		in, want string
		repairs  int // at least this many repairs
	}{
		{`{"a": 1}`, `{"a": 1}`, 0},
		{` [1, 2.5e3, "x\u00e9", null, true] `, ` [1, 2.5e3, "x\u00e9", null, true] `, 0},
		{`{'a': 'it's'}`, `{"a":"it's"}`, 2},
		{`{"a": 1,}`, `{"a":1}`, 1},
		{`[1, 2,]`, `[1,2]`, 1},
		{`{a: 1, b_c: "x"}`, `{"a":1,"b_c":"x"}`, 1},
		{`{"a": True, "b": False, "c": None}`, `{"a":true,"b":false,"c":null}`, 1},
		{"{\"a\": \"line\nbreak\ttab\"}", `{"a":"line\nbreak\ttab"}`, 1},
		{`{"a": 1 // note
}`, `{"a":1}`, 1},
		{`{"a": /* x */ 1}`, `{"a":1}`, 1},
		{`{"a": 1 "b": 2}`, `{"a":1,"b":2}`, 1},
		{`[{"a": "x"} {"b": "y"}]`, `[{"a": "x"},{"b": "y"}]`, 1},
		{`{"path": src/main.go, "n": 1}`, `{"path":"src/main.go","n":1}`, 1},
		{`{path: a//b}`, `{"path":"a//b"}`, 2},
		{`{"a": +1, "b": .5, "c": 0x1F, "d": 1.}`, `{"a":1,"b":0.5,"c":31,"d":1}`, 1},
		{`{"a": NaN}`, `{"a":null}`, 1},
		{`{"cmd": "echo "hi" there"}`, `{"cmd":"echo \"hi\" there"}`, 1},
		{`{"a": "x\'y"}`, `{"a":"x'y"}`, 1},
		{`{"a": "\q"}`, `{"a":"\\q"}`, 1},
		{`{"a": 1}}`, `{"a":1}`, 1},
		{`{"a": "\ud83d\ude80"}`, `{"a": "\ud83d\ude80"}`, 0},
		{"{'tool': 'read_file', // the reader\n 'args': {'path':'a.yaml',},\n}", `{"tool":"read_file","args":{"path":"a.yaml"}}`, 3},
		{`{"a": "x" /* c */, "b": /* d */ 2}`, `{"a":"x","b":2}`, 1},
		{"{'a': 'q', # why\n 'b': 1}", `{"a":"q","b":1}`, 2},
		{`{“a”: “say ‘hi’”, ‘b’: ‘it’s’}`, `{"a":"say ‘hi’","b":"it’s"}`, 1},
		{`{"a":▁"x",▁"b":Ġ[1,Ċ2]}`, `{"a":"x","b":[1,2]}`, 1},
		{`{"a": "▁x"}`, `{"a": "▁x"}`, 0},
	}
	for _, c := range cases {
		out, rep, err := RepairJSON([]byte(c.in))
		if err != nil {
			t.Errorf("RepairJSON(%q): %v", c.in, err)
			continue
		}
		if string(out) != c.want {
			t.Errorf("RepairJSON(%q) = %q, want %q", c.in, out, c.want)
		}
		if len(rep) < c.repairs {
			t.Errorf("RepairJSON(%q) repairs = %q, want at least %d", c.in, rep, c.repairs)
		}
		if !json.Valid(out) {
			t.Errorf("RepairJSON(%q) = %q is not valid JSON", c.in, out)
		}
	}
}

func TestRepairJSONRefuses(t *testing.T) {
	for _, in := range []string{``, `   `, `{"a": `, `{"a": "unterminated`, `[1, 2`, `{"a" 1}`, `hello`, `{"a": 1} trailing words`, strings.Repeat("[", 200) + "1," + strings.Repeat("]", 200)} {
		if out, _, err := RepairJSON([]byte(in)); err == nil {
			t.Errorf("RepairJSON(%q) = %q, want an error", in, out)
		}
	}
	_, _, err := RepairJSON([]byte(`{"a": "cut`))
	var se *SyntaxError
	if !errors.As(err, &se) || !se.Truncated {
		t.Errorf("truncated input: err = %v, want a *SyntaxError with Truncated", err)
	}
}

// FuzzRepairJSON checks that valid JSON is never altered, that what comes
// out is valid JSON, and that repairing twice changes nothing more.
func FuzzRepairJSON(f *testing.F) {
	for _, s := range []string{`{"a": 1}`, `{'a': 'it's'}`, `[1, 2,]`, `{a: True}`, `{"c": "echo "x" && ls"}`, "{\"a\": \"x\ny\"}", `{"a": 1 // c
}`, `{"a": "\ud83d"}`, `[{"b": [null, 1e5, -0.5]}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, _, err := RepairJSON(in)
		if json.Valid(in) {
			if err != nil || string(out) != string(in) {
				t.Fatalf("valid JSON %q altered: %q, %v", in, out, err)
			}
			return
		}
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("RepairJSON(%q) = %q, not valid JSON", in, out)
		}
		again, rep, err := RepairJSON(out)
		if err != nil || string(again) != string(out) || len(rep) != 0 {
			t.Fatalf("repairing %q again gave %q, %q, %v", out, again, rep, err)
		}
	})
}

func TestIsIntegral(t *testing.T) {
	for n, want := range map[string]bool{"5": true, "5.0": true, "5.5": false, "1e3": true, "1.5e1": true, "1.25e1": false, "1e-3": false, "0.0": true, "-0": true, "1e100000": true, "1e-100000": false, "123.456e2": false, "123.456e3": true, "1e99999999999999999999": true} {
		if got := IsIntegral(n); got != want {
			t.Errorf("%s: %v", n, got)
		}
	}
}

func TestSwarStops(t *testing.T) {
	for _, q := range []byte{'"', '\'', 0xE2} {
		for pos := 0; pos < 8; pos++ {
			for c := 0; c < 256; c++ {
				w := []byte("abcdefgh")
				w[pos] = byte(c)
				want := byte(c) == q || c == '\\' || c < 0x20
				if got := swarStops(binary.LittleEndian.Uint64(w), swarOnes*uint64(q)); got != want {
					t.Fatalf("quote %#x, byte %#x at %d: %v, want %v", q, c, pos, got, want)
				}
			}
		}
	}
}

// TestBareListMissingComma: JSON found in prose inserts no missing comma,
// but between two objects of a list, [{...} {...}] (Ollama's tests).
func TestBareListMissingComma(t *testing.T) {
	var pool Pool
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`[{"name": "a", "arguments": {"x": "1"}} {"name": "b", "arguments": {"x": "2"}}]`, true},
		{`{"a": 1 "b": 2}`, false},
	} {
		var r Reader
		r.Reset(0, true, &pool)
		if st := r.Feed([]byte(c.in), true); (st == Done) != c.ok {
			t.Errorf("%s: status %v (%s), want done %v", c.in, st, r.FailMsg, c.ok)
		}
	}
}
