package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/ptkit/ptk"
)

// TestMemoryResponses: the responses kept in memory never pass their
// bound: the oldest are forgotten, and one larger than the bound is
// refused, so that clients cannot fill the gateway's memory.
func TestMemoryResponses(t *testing.T) {
	ctx := context.Background()
	m := &memoryResponses{max: 10 << 10}
	msg := func(n int) []ptk.Message { return []ptk.Message{{Role: ptk.RoleUser, Content: strings.Repeat("x", n)}} }
	for i := range 100 {
		if err := m.Save(ctx, "r"+string(rune('A'+i%26))+string(rune('a'+i/26)), msg(1000)); err != nil {
			t.Fatal(err)
		}
	}
	if m.size > m.max || len(m.msgs) != len(m.order) || len(m.msgs) > 10 {
		t.Errorf("%d bytes in %d responses kept, over the bound of %d", m.size, len(m.msgs), m.max)
	}
	if got, _ := m.Load(ctx, "rAa"); got != nil {
		t.Error("the oldest response is still kept")
	}
	last := "r" + string(rune('A'+99%26)) + string(rune('a'+99/26))
	if got, _ := m.Load(ctx, last); len(got) != 1 {
		t.Error("the newest response is not kept")
	}
	if err := m.Save(ctx, "huge", msg(20<<10)); err == nil {
		t.Error("a response larger than the bound was kept")
	}
	if err := m.Save(ctx, last, msg(10)); err != nil || m.size > m.max {
		t.Errorf("saving again under one id: %v, %d bytes", err, m.size)
	}
}
