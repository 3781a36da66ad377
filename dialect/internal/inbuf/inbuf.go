// Package inbuf holds the input buffers of streamed replies: how one grows,
// and how a finished stream hands its buffer to the next.
package inbuf

import (
	"sync"
	"sync/atomic"
)

// Get returns the buffer a new stream starts with: a finished stream's, with
// the pool's header to give it back with (see Put); else one of the size
// the last buffer kept by a call's arguments had, once; else nil.
func Get() (b []byte, pooled *[]byte) {
	if p, ok := buffers.Get().(*[]byte); ok {
		return (*p)[:0], p
	}
	if n := nextSize.Swap(0); n > 0 {
		return make([]byte, 0, n), nil
	}
	return nil, nil
}

// Put hands a finished stream's buffer b to the next stream, with the header
// Get gave (or nil). kept: a call's arguments are a slice of b, which must
// not be written again; only its size is remembered, so that a program
// reading large replies one after another does not grow each from 4 KiB.
func Put(b []byte, pooled *[]byte, kept bool) {
	if cap(b) == 0 || cap(b) > maxPooled {
		return
	}
	if kept {
		nextSize.Store(int64(cap(b)))
		return
	}
	if pooled == nil {
		pooled = new([]byte)
	}
	*pooled = b[:0]
	buffers.Put(pooled)
}

// nextSize is the capacity of the last buffer kept by a call's arguments.
var nextSize atomic.Int64

// buffers holds finished streams' buffers (*[]byte): reply after reply is
// read without growing a buffer anew (growing one allocates about twice the
// reply).
var buffers sync.Pool

// maxPooled is the largest buffer kept for another stream.
const maxPooled = 4 << 20

// Grow makes room for n more bytes of a streamed reply, doubling its
// capacity up to 256 KiB and adding half beyond: a reply streamed in tiny
// chunks is copied a bounded number of times (its bytes about twice in
// all), and a long one holds at most a third of its size unused.
func Grow(b []byte, n int) []byte {
	if len(b)+n <= cap(b) {
		return b
	}
	c := max(2*cap(b), 4096)
	if cap(b) >= 256<<10 {
		c = cap(b) + cap(b)/2
	}
	// append of a make is not an allocation of its own: it grows b and
	// clears only the new part.
	return append(b, make([]byte, max(c, len(b)+n)-len(b))...)[:len(b)]
}
