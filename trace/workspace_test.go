package trace

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ptkit/ptk"
)

// A chat's conversations are found by their workspace, the latest first;
// a Save (a run that continues one) keeps the workspace.
func TestConversationsIn(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		msgs := []ptk.Message{{Role: ptk.RoleUser, Content: "hi"}, {Role: ptk.RoleAssistant, Content: "hello"}}
		for _, c := range []struct{ id, ws string }{{"a1", "/src/a"}, {"b1", "/src/b"}, {"a2", "/src/a"}, {"run", ""}} {
			if err := s.Save(ctx, c.id, msgs); err != nil {
				t.Fatal(err)
			}
			if c.ws != "" {
				if err := s.SetWorkspace(ctx, c.id, c.ws); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
		if err := s.SetWorkspace(ctx, "nope", "/src/a"); !errors.Is(err, ErrNotFound) {
			t.Errorf("SetWorkspace of a missing conversation: %v", err)
		}
		got, err := s.ConversationsIn(ctx, "/src/a", 0)
		if err != nil || len(got) != 2 || got[0].ID != "a2" || got[1].ID != "a1" || got[0].Messages != 2 {
			t.Fatalf("ConversationsIn(/src/a) = %+v, %v", got, err)
		}
		// a1 continued: it is the latest, and still /src/a's
		if err := s.Save(ctx, "a1", append(msgs, msgs...)); err != nil {
			t.Fatal(err)
		}
		got, _ = s.ConversationsIn(ctx, "/src/a", 1)
		if len(got) != 1 || got[0].ID != "a1" || got[0].Messages != 4 {
			t.Errorf("after a1 continued: %+v", got)
		}
		if got, _ := s.ConversationsIn(ctx, "/src/c", 0); len(got) != 0 {
			t.Errorf("a workspace without conversations: %+v", got)
		}
		// A workspace named like a pattern is only itself.
		if got, _ := s.ConversationsIn(ctx, "%", 0); len(got) != 0 {
			t.Errorf("ConversationsIn(%%) = %+v", got)
		}
	})
}

// A workspace whose name is not UTF-8 (a Linux path may be anything but
// NUL) and a conversation id holding a NUL are kept and found on every
// backend: PostgreSQL's text takes neither, so both go through the
// store's escape, and come back as they were.
func TestConversationsInOddText(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		id, ws := "chat\x00one", "/src/caf\xe9"
		if err := s.Save(ctx, id, []ptk.Message{{Role: ptk.RoleUser, Content: "hi"}}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetWorkspace(ctx, id, ws); err != nil {
			t.Fatal(err)
		}
		got, err := s.ConversationsIn(ctx, ws, 0)
		if err != nil || len(got) != 1 || got[0].ID != id {
			t.Fatalf("ConversationsIn(%q) = %+v, %v", ws, got, err)
		}
		all, err := s.Conversations(ctx)
		if err != nil || len(all) != 1 || all[0].ID != id {
			t.Fatalf("Conversations = %+v, %v", all, err)
		}
	})
}
