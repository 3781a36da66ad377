package jsonfast

import (
	"bytes"
	"hash/maphash"
	"sync"
)

// A coding agent (Claude Code, Codex) sends the same tools on every
// request of a session: the same array of JSON Schemas, byte for byte, a
// few kilobytes the decoder read and checked afresh each time, the largest
// part of reading the request. A Memo remembers what was read from such a
// value, keyed by its bytes: when the text at the Reader begins with a
// value read before, byte for byte, reading it again would give the same
// result (a JSON array or object ends where its own bytes say, so a value
// that is a prefix of the text is the value there), and the Memo gives a
// copy of that result instead.

// MemoMinLen is the shortest value a Memo keeps: below it, reading is as
// cheap as looking up.
const MemoMinLen = 256

// memoHead is how many bytes of the text a Memo hashes to find the values
// read before that may begin it; the candidates are then compared in full.
const memoHead = 64

// memoPerHead bounds the values kept under one head: many arrays of tools
// begin with the same 64 bytes.
const memoPerHead = 4

// maxMemoSeen bounds how many hashes of values seen once a Memo remembers.
const maxMemoSeen = 1 << 12

// Memo keeps values read from JSON text by the text they were read from.
// It shares nothing mutable between its callers: the value it keeps was
// read from its own copy of the text, and each reader gets a copy of it
// made by the clone function given to Read (slices of the text taken
// from the caller's own text; strings, which cannot change, shared). It
// keeps a value the second time it is seen, so that a one-off costs a hash
// and no copy, and up to a number of bytes of text, forgetting everything
// when that would be passed. It is safe for concurrent use. A nil *Memo
// keeps nothing.
type Memo[T any] struct {
	max  int
	seed maphash.Seed

	mu   sync.RWMutex
	vals map[uint64][]memoEntry[T] // by the hash of their first memoHead bytes
	size int
	seen map[uint64]struct{} // values seen once, by hash
}

type memoEntry[T any] struct {
	text   []byte // the value's text, the Memo's own copy
	v      T      // read from text
	spaced bool   // text has space between tokens
}

// NewMemo returns a Memo that keeps up to maxBytes of text.
func NewMemo[T any](maxBytes int) *Memo[T] {
	return &Memo[T]{max: maxBytes, seed: maphash.MakeSeed()}
}

// Read reads the next value into v as read(r, v) does. When the text at r
// begins with a value read before, it sets v to clone(kept, from, to) and
// moves r past it: kept is the value read then, from its text, and to the
// same text in r's bytes. clone must return a value that shares nothing
// mutable with kept, its slices of from taken from to instead (Rebase);
// it is also used to keep a value, from r's bytes to the Memo's copy.
func (m *Memo[T]) Read(r *Reader, v *T, read func(*Reader, *T) bool, clone func(kept T, from, to []byte) T) bool {
	if m == nil {
		return read(r, v)
	}
	r.space()
	start := r.i
	rest := r.b[start:]
	head := maphash.Bytes(m.seed, rest[:min(len(rest), memoHead)])
	m.mu.RLock()
	for _, e := range m.vals[head] {
		if bytes.HasPrefix(rest, e.text) {
			m.mu.RUnlock()
			to := rest[:len(e.text)]
			*v = clone(e.v, e.text, to)
			r.i += len(to)
			r.spaced = r.spaced || e.spaced
			return true
		}
	}
	m.mu.RUnlock()
	spaced := r.spaced
	r.spaced = false
	if !read(r, v) {
		return false
	}
	text := r.b[start:r.i]
	if len(text) >= MemoMinLen && len(text) <= m.max/4 {
		m.put(head, text, *v, r.spaced, clone)
	}
	r.spaced = r.spaced || spaced
	return true
}

// Size returns how many bytes of text m keeps.
func (m *Memo[T]) Size() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.size
}

// put keeps v, read from text, when text was seen before; otherwise it
// remembers that it was seen.
func (m *Memo[T]) put(head uint64, text []byte, v T, spaced bool, clone func(T, []byte, []byte) T) {
	h := maphash.Bytes(m.seed, text)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.seen[h]; !ok {
		if m.seen == nil || len(m.seen) >= maxMemoSeen {
			m.seen = make(map[uint64]struct{})
		}
		m.seen[h] = struct{}{}
		return
	}
	for _, e := range m.vals[head] {
		if bytes.Equal(e.text, text) {
			return // another goroutine kept it
		}
	}
	if m.size+len(text) > m.max {
		m.vals, m.size = nil, 0
	}
	if m.vals == nil {
		m.vals = make(map[uint64][]memoEntry[T])
	}
	own := bytes.Clone(text)
	es := m.vals[head]
	if len(es) >= memoPerHead {
		m.size -= len(es[0].text)
		es = append(es[:0:0], es[1:]...)
	}
	m.vals[head] = append(es, memoEntry[T]{text: own, v: clone(v, text, own), spaced: spaced})
	m.size += len(own)
}

// Rebase returns the bytes of to that sub is of from: sub is a slice of
// from (as a Reader's Raw returns one, never with a capacity of its own),
// and to a text of the same length. nil stays nil. The slice it returns
// runs on to the end of to, as the Reader's do, so that it can be rebased
// in turn.
func Rebase(sub, from, to []byte) []byte {
	if sub == nil {
		return nil
	}
	// sub and from end at the same end of their array, so their
	// capacities differ by sub's offset in from.
	off := cap(from) - cap(sub)
	if off < 0 || off+len(sub) > len(from) || len(to) != len(from) {
		panic("jsonfast: Rebase of a slice that is not from's")
	}
	return to[off : off+len(sub)]
}

// RebaseEach returns a copy of xs with rebase applied to each element's
// copy (it rebases the element's slices of from, as Rebase does, and
// copies what else it holds that may change); nil stays nil. A Memo's
// clone of a slice of values is one.
func RebaseEach[T any](xs []T, rebase func(x *T)) []T {
	if xs == nil {
		return nil
	}
	out := make([]T, len(xs))
	for i := range xs {
		out[i] = xs[i]
		rebase(&out[i])
	}
	return out
}

// MemoString reads a string as r.String does, through m: the text of a
// long string a client sends again and again (a system prompt, the turns
// of a conversation sent again with each call) is read once, and the
// string, which cannot change, shared.
func MemoString(m *Memo[string], r *Reader, s *string) bool {
	return m.Read(r, s, (*Reader).String, func(kept string, _, _ []byte) string { return kept })
}
