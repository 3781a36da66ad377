package trace

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/agent"
)

// The store keeps the conversations that 'ptk run --conversation' and
// 'ptk chat' continue: a Store is an agent.Store.
var _ agent.Store = (*Store)(nil)

// Conversation is a stored conversation's summary.
type Conversation struct {
	ID        string    `json:"id"`
	UpdatedAt time.Time `json:"updated_at"`
	Messages  int       `json:"messages"`
}

// Load returns a conversation's messages; none for an unknown id.
func (s *Store) Load(ctx context.Context, id string) ([]ptk.Message, error) {
	var text string
	err := s.scan(s.db.QueryRowContext(ctx, s.q("SELECT messages FROM conversations WHERE id = ?"), s.args([]any{id})...), &text)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var msgs []ptk.Message
	if err := json.Unmarshal([]byte(text), &msgs); err != nil {
		return nil, fmt.Errorf("conversation %q: %w", id, err)
	}
	return msgs, nil
}

// Save replaces a conversation's messages.
func (s *Store) Save(ctx context.Context, id string, msgs []ptk.Message) error {
	if s.readOnly {
		return ErrReadOnly
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, s.q(`INSERT INTO conversations (id, updated_us, messages) VALUES (?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET updated_us = excluded.updated_us, messages = excluded.messages`),
		s.args([]any{id, time.Now().UnixMicro(), string(b)})...)
	return err
}

// Append adds msgs to a conversation after base, the messages the caller
// loaded, in one transaction that holds the conversation: SQLite's write
// lock (every transaction of the store begins IMMEDIATE), PostgreSQL's
// row lock (SELECT … FOR UPDATE). Two processes that continue one
// conversation at once therefore both keep their exchange, the later
// after the earlier. A conversation that no longer starts with base was
// cleared or replaced meanwhile: nothing is written, and the error wraps
// agent.ErrConversationChanged.
func (s *Store) Append(ctx context.Context, id string, base, msgs []ptk.Message) error {
	if s.readOnly {
		return ErrReadOnly
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	lock := ""
	if s.pg {
		// The row exists before it is locked, so that two first appends
		// wait for each other too.
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO conversations (id, updated_us, messages) VALUES (?, ?, '[]')
			ON CONFLICT (id) DO NOTHING`), s.args([]any{id, time.Now().UnixMicro()})...); err != nil {
			return err
		}
		lock = " FOR UPDATE"
	}
	var text string
	var stored []ptk.Message
	switch err := s.scan(tx.QueryRowContext(ctx, s.q("SELECT messages FROM conversations WHERE id = ?"+lock), s.args([]any{id})...), &text); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal([]byte(text), &stored); err != nil {
			return fmt.Errorf("conversation %q: %w", id, err)
		}
	}
	if !agent.HasPrefix(stored, base) {
		return fmt.Errorf("conversation %q: %w", id, agent.ErrConversationChanged)
	}
	b, err := json.Marshal(append(stored, msgs...))
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO conversations (id, updated_us, messages) VALUES (?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET updated_us = excluded.updated_us, messages = excluded.messages`),
		s.args([]any{id, time.Now().UnixMicro(), string(b)})...); err != nil {
		return err
	}
	return tx.Commit()
}

// Conversations lists the stored conversations, the last updated first.
func (s *Store) Conversations(ctx context.Context) ([]Conversation, error) {
	return s.listConversations(ctx, "SELECT id, updated_us, messages FROM conversations ORDER BY updated_us DESC, id")
}

// listConversations runs query, which selects id, updated_us and messages
// of conversations, with args.
func (s *Store) listConversations(ctx context.Context, query string, args ...any) ([]Conversation, error) {
	rows, err := s.db.QueryContext(ctx, s.q(query), s.args(args)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Conversation{}
	for rows.Next() {
		var c Conversation
		var us int64
		var text string
		if err := s.scan(rows, &c.ID, &us, &text); err != nil {
			return nil, err
		}
		c.UpdatedAt = time.UnixMicro(us)
		var msgs []json.RawMessage
		json.Unmarshal([]byte(text), &msgs)
		c.Messages = len(msgs)
		out = append(out, c)
	}
	return out, rows.Err()
}

// DeleteConversation deletes a conversation; ErrNotFound when there is none.
func (s *Store) DeleteConversation(ctx context.Context, id string) error {
	if s.readOnly {
		return ErrReadOnly
	}
	res, err := s.db.ExecContext(ctx, s.q("DELETE FROM conversations WHERE id = ?"), s.args([]any{id})...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}
