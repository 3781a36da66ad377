package trace

import "context"

// SetWorkspace records the folder a conversation is held in (ptk chat's
// workspace), for ConversationsIn; ErrNotFound when the conversation is
// not stored.
func (s *Store) SetWorkspace(ctx context.Context, id, workspace string) error {
	if s.readOnly {
		return ErrReadOnly
	}
	res, err := s.db.ExecContext(ctx, s.q("UPDATE conversations SET workspace = ? WHERE id = ?"), s.args([]any{workspace, id})...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// ConversationsIn lists the conversations held in workspace (see
// SetWorkspace), the last updated first, at most limit of them (0: all).
func (s *Store) ConversationsIn(ctx context.Context, workspace string, limit int) ([]Conversation, error) {
	query := "SELECT id, updated_us, messages FROM conversations WHERE workspace = ? ORDER BY updated_us DESC, id"
	args := []any{workspace}
	if limit > 0 {
		query += " LIMIT ?"
		args = append(args, limit)
	}
	return s.listConversations(ctx, query, args...)
}
