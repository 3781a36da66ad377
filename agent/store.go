package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/ptkit/ptk"
)

// Store keeps conversations by id, so that a run can continue an earlier one
// (Options.ConversationID). Implementations must be safe for concurrent use,
// and keep every exchange of runs that continue one conversation at once.
type Store interface {
	// Load returns the conversation's messages; none for an unknown id.
	Load(ctx context.Context, id string) ([]ptk.Message, error)
	// Append adds msgs to the conversation after base, the messages the
	// caller loaded, in one step that no other Append or Save splits.
	// Messages that another run appended since base stay, and msgs follow
	// them: two runs that continue a conversation at once both keep their
	// exchange. When the conversation no longer starts with base (it was
	// cleared or replaced meanwhile), nothing is added and the error wraps
	// ErrConversationChanged.
	Append(ctx context.Context, id string, base, msgs []ptk.Message) error
	// Save replaces the conversation's messages (none: it is cleared).
	Save(ctx context.Context, id string, msgs []ptk.Message) error
}

// ErrConversationChanged is the error of an Append to a conversation that
// was cleared or replaced after the caller loaded it: the caller's
// exchange was not kept.
var ErrConversationChanged = errors.New("the conversation was cleared or replaced while this run ran, so this exchange was not kept")

// HasPrefix reports whether msgs start with prefix, message by message as
// JSON: what a Store checks before an Append.
func HasPrefix(msgs, prefix []ptk.Message) bool {
	if len(msgs) < len(prefix) {
		return false
	}
	for i := range prefix {
		a, err1 := json.Marshal(msgs[i])
		b, err2 := json.Marshal(prefix[i])
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			return false
		}
	}
	return true
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

// Append adds a copy of msgs to the conversation, after base.
func (s *MemoryStore) Append(_ context.Context, id string, base, msgs []ptk.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !HasPrefix(s.convs[id], base) {
		return ErrConversationChanged
	}
	if s.convs == nil {
		s.convs = make(map[string][]ptk.Message)
	}
	s.convs[id] = append(slices.Clip(s.convs[id]), msgs...)
	return nil
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
