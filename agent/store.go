package agent

import (
	"context"
	"slices"
	"sync"

	"github.com/ptkit/ptk"
)

// Store keeps conversations by id, so that a run can continue an earlier one
// (Options.ConversationID). Implementations must be safe for concurrent use.
type Store interface {
	// Load returns the conversation's messages; none for an unknown id.
	Load(ctx context.Context, id string) ([]ptk.Message, error)
	// Save replaces the conversation's messages.
	Save(ctx context.Context, id string, msgs []ptk.Message) error
}

// MemoryStore is a Store in memory. Its zero value is ready to use.
type MemoryStore struct {
	mu    sync.Mutex
	convs map[string][]ptk.Message
}

var _ Store = (*MemoryStore)(nil)

var defaultStore = &MemoryStore{}

// Load returns a copy of the conversation's messages.
func (s *MemoryStore) Load(_ context.Context, id string) ([]ptk.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.convs[id]), nil
}

// Save keeps a copy of msgs as the conversation's messages.
func (s *MemoryStore) Save(_ context.Context, id string, msgs []ptk.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.convs == nil {
		s.convs = make(map[string][]ptk.Message)
	}
	s.convs[id] = slices.Clone(msgs)
	return nil
}

// Delete forgets a conversation.
func (s *MemoryStore) Delete(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.convs, id)
}
