package protocol

import (
	"strings"
	"testing"
)

// TestStreamAllocs: reading a reply costs a few allocations a reply, not
// one a chunk: prose streamed in 2,000 pieces, each read as it comes,
// allocates only as its text grows (doubling), and a short reply with a
// call about as many times as read whole.
func TestStreamAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	p, err := NewParser(testTools)
	if err != nil {
		t.Fatal(err)
	}
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 200) // 9 KB
	read := func(text string, n int, flush bool) float64 {
		ps := pieces(text, n)
		return testing.AllocsPerRun(50, func() {
			s := p.NewStream(func(Event) {})
			for _, c := range ps {
				s.WriteString(c)
				if flush {
					s.Flush()
				}
			}
			s.Finish()
		})
	}
	// the stream, its text doubling from 256 bytes to 16 KiB, the result
	if got := read(prose, 5, true); got > 10 {
		t.Errorf("prose in %d pieces read one by one: %v allocations, want at most 10", len(prose)/5, got)
	}
	if got := read(prose, 5, false); got > 10 {
		t.Errorf("prose in %d pieces read in batches: %v allocations, want at most 10", len(prose)/5, got)
	}
	call := shortReplies[0].text
	whole := testing.AllocsPerRun(50, func() { p.Parse(call) })
	if got := read(call, 5, true); got > whole+8 {
		t.Errorf("a call streamed in pieces read one by one: %v allocations, read whole %v", got, whole)
	}
	if whole > 20 {
		t.Errorf("a call read whole: %v allocations, want at most 20", whole)
	}
}
