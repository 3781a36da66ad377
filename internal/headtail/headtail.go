// Package headtail is a writer that keeps the head and the tail of what is
// written to it and counts the rest, so that its memory stays bounded
// however much a program prints: the shell tool reads a command's output
// through it, and the sandbox runner a confined program's.
package headtail

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Buffer is an [io.Writer] that keeps the head and the tail of what is
// written and counts the rest, so that its memory stays under the size given
// however much is written. It is not safe for concurrent use.
type Buffer struct {
	headMax int
	head    []byte
	tail    ring
	total   int64 // bytes written
	lines   int64 // newlines written
}

// New returns a Buffer that keeps at most size bytes (at least 2).
func New(size int) *Buffer {
	size = max(size, 2)
	headMax := size * 2 / 5
	// The tail keeps one byte more than it shows, to tell whether what it
	// shows starts a line.
	return &Buffer{headMax: headMax, tail: ring{size: size - headMax + 1}}
}

// Write keeps what fits of p; it never fails.
func (o *Buffer) Write(p []byte) (int, error) {
	o.total += int64(len(p))
	o.lines += int64(bytes.Count(p, []byte{'\n'}))
	n := len(p)
	if room := o.headMax - len(o.head); room > 0 {
		k := min(room, len(p))
		o.head = append(o.head, p[:k]...)
		p = p[k:]
	}
	o.tail.write(p)
	return n, nil
}

// Total returns how many bytes were written, kept or not.
func (o *Buffer) Total() int64 { return o.total }

// String returns what was written as valid UTF-8. When more was written than
// fits, the middle is replaced by a note of what was cut; the cut is moved to
// line boundaries when that loses little.
func (o *Buffer) String() string {
	head, tail := o.head, o.tail.bytes()
	if o.total < int64(o.headMax+o.tail.size) {
		return strings.ToValidUTF8(string(head)+string(tail), "\uFFFD")
	}
	if i := bytes.LastIndexByte(head, '\n'); i >= len(head)/2 {
		head = head[:i+1]
	}
	prev, tail := tail[0], tail[1:]
	if i := bytes.IndexByte(tail, '\n'); prev != '\n' && i >= 0 && i < len(tail)/2 {
		tail = tail[i+1:]
	}
	cut := o.total - int64(len(head)) - int64(len(tail))
	lines := o.lines - int64(bytes.Count(head, []byte{'\n'})) - int64(bytes.Count(tail, []byte{'\n'}))
	var b strings.Builder
	b.Write(head)
	if len(head) > 0 && head[len(head)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[... %s bytes (%s lines) cut from the middle of the output ...]\n", thousands(cut), thousands(lines))
	b.Write(tail)
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

// ring keeps the last size bytes written to it. Its buffer grows to size as
// bytes come, then wraps around.
type ring struct {
	size int
	buf  []byte
	w    int // where the next byte goes once buf is full; the oldest byte
}

func (r *ring) write(p []byte) {
	if len(p) >= r.size {
		r.buf = append(r.buf[:0], p[len(p)-r.size:]...)
		r.w = 0
		return
	}
	if room := r.size - len(r.buf); room > 0 {
		k := min(room, len(p))
		r.buf = append(r.buf, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return
	}
	n := copy(r.buf[r.w:], p)
	copy(r.buf, p[n:])
	r.w = (r.w + len(p)) % r.size
}

// bytes returns the bytes kept, oldest first.
func (r *ring) bytes() []byte {
	out := make([]byte, 0, len(r.buf))
	return append(append(out, r.buf[r.w:]...), r.buf[:r.w]...)
}

// thousands formats n ≥ 0 with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
