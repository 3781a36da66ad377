package inbuf

import "testing"

func TestGrow(t *testing.T) {
	var b []byte
	var caps []int
	for len(b) < 1<<20 {
		b = Grow(b, 1)
		if n := cap(b); len(caps) == 0 || caps[len(caps)-1] != n {
			caps = append(caps, n)
		}
		b = b[:cap(b)]
	}
	// doubling up to 256 KiB, then by half (append rounds each up to a
	// size class of the allocator)
	if caps[0] != 4096 {
		t.Errorf("the first buffer holds %d bytes, want 4096", caps[0])
	}
	for i := 1; i < len(caps); i++ {
		r := float64(caps[i]) / float64(caps[i-1])
		if caps[i-1] < 256<<10 && r < 2 || caps[i-1] >= 256<<10 && (r < 1.5 || r > 1.7) {
			t.Errorf("grew from %d to %d (%.2f×): %v", caps[i-1], caps[i], r, caps)
		}
	}
	if b := Grow(make([]byte, 10, 16), 100); len(b) != 10 || cap(b) < 110 {
		t.Errorf("Grow for more than doubling: len %d cap %d", len(b), cap(b))
	}
}

func TestPutGet(t *testing.T) {
	// a buffer a call's arguments keep is not handed on: only its size
	Put(make([]byte, 5, 1<<16), nil, true)
	if b, p := Get(); p != nil || cap(b) != 1<<16 {
		t.Errorf("after a kept buffer: cap %d, pooled %v; want a new buffer of 64 KiB", cap(b), p != nil)
	}
	if b, _ := Get(); b != nil {
		t.Errorf("the size is used once: got cap %d", cap(b))
	}
	// a buffer too big is dropped
	Put(make([]byte, 0, maxPooled+1), nil, false)
	if b, p := Get(); p != nil && cap(b) > maxPooled {
		t.Error("a buffer over maxPooled was kept")
	}
}
