package jsonfast

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// memoValue is what the tests read: a value's text (a slice of the
// Reader's bytes) and how many times it was read.
type memoValue struct{ raw json.RawMessage }

func memoClone(v memoValue, from, to []byte) memoValue {
	return memoValue{raw: Rebase(v.raw, from, to)}
}

func memoText(i int) string {
	return fmt.Sprintf(`[{"n":%d,"s":"%s"}, {"t": [1, 2, 3]}]`, i, strings.Repeat("x", MemoMinLen))
}

// A Memo reads a value the first two times it sees it and keeps it the
// second; after, it finds it at the head of any text (followed by
// anything), skips it and gives its value as slices of that text.
func TestMemo(t *testing.T) {
	m := NewMemo[memoValue](1 << 20)
	reads := 0
	read := func(r *Reader, v *memoValue) bool { reads++; return r.RawField(&v.raw) }
	text := memoText(1)
	for i, tail := range []string{"", " , 5", "]", ` {"x":1}`} {
		b := []byte(" " + text + tail)
		r := NewReader(b)
		var v memoValue
		if !m.Read(&r, &v, read, memoClone) {
			t.Fatalf("read %d failed", i)
		}
		if string(v.raw) != text || r.i != 1+len(text) {
			t.Fatalf("read %d: %q, at %d", i, v.raw, r.i)
		}
		if &v.raw[0] != &b[1] {
			t.Errorf("read %d: the value is not a slice of the text read", i)
		}
		if !r.spaced {
			t.Errorf("read %d: the space in the value was not noted", i)
		}
	}
	if reads != 2 {
		t.Errorf("read %d times, want 2 (seen, kept, then found)", reads)
	}
	// A value that is not all there, or differs, is read.
	for _, b := range []string{text[:len(text)-1], strings.Replace(text, `"t"`, `"u"`, 1)} {
		r := NewReader([]byte(b))
		var v memoValue
		before := reads
		ok := m.Read(&r, &v, read, memoClone)
		if reads != before+1 || ok != (b[len(b)-1] == ']') {
			t.Errorf("%.30q...: read %d times, ok %v", b[len(b)-20:], reads-before, ok)
		}
	}
}

// A Memo keeps no more than its bytes, and no more than memoPerHead values
// with the same head.
func TestMemoBounds(t *testing.T) {
	m := NewMemo[memoValue](8 * MemoMinLen)
	read := func(r *Reader, v *memoValue) bool { return r.RawField(&v.raw) }
	for i := range 40 {
		// The same 64 bytes first, then a number of its own.
		b := []byte(fmt.Sprintf(`["%s", %d]`, strings.Repeat("h", MemoMinLen), i))
		for range 2 {
			r := NewReader(b)
			var v memoValue
			if !m.Read(&r, &v, read, memoClone) || string(v.raw) != string(b) {
				t.Fatalf("%d: read %q", i, v.raw)
			}
		}
		if m.Size() > 8*MemoMinLen {
			t.Fatalf("the memo holds %d bytes, over %d", m.Size(), 8*MemoMinLen)
		}
		for _, es := range m.vals {
			if len(es) > memoPerHead {
				t.Fatalf("%d values under one head", len(es))
			}
		}
	}
	if m.Size() == 0 {
		t.Error("the memo kept nothing")
	}
}

func TestRebase(t *testing.T) {
	from := []byte(`{"a":[1,2],"b":"x"}`)
	to := bytes.ToUpper(from)
	sub := from[5:10]
	if got := Rebase(sub, from, to); string(got) != "[1,2]" || &got[0] != &to[5] {
		t.Errorf("Rebase = %q", got)
	}
	if got := Rebase(Rebase(sub, from, to), to, from); &got[0] != &from[5] {
		t.Error("a rebased slice does not rebase back")
	}
	if Rebase(nil, from, to) != nil {
		t.Error("nil rebased to non-nil")
	}
}
