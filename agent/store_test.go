package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// barrierModel answers each call with the last user message echoed, but
// only once n calls are waiting: runs that overlap, for certain.
type barrierModel struct {
	wg *sync.WaitGroup
}

func (m barrierModel) Generate(ctx context.Context, req llm.Request) (*llm.Response, error) {
	m.wg.Done()
	m.wg.Wait()
	last := req.Messages[len(req.Messages)-1].Content
	return &llm.Response{Content: "answer to " + last}, nil
}

// TestConcurrentRunsKeepEveryExchange runs several runs that continue one
// conversation at once: each loads it before any saves, and every
// exchange is kept. With a Save that replaced the conversation, all but
// one were lost.
func TestConcurrentRunsKeepEveryExchange(t *testing.T) {
	store := &MemoryStore{}
	ctx := context.Background()
	store.Save(ctx, "c1", []ptk.Message{{Role: ptk.RoleUser, Content: "hi"}, {Role: ptk.RoleAssistant, Content: "hello"}})
	const runs = 4
	var wg sync.WaitGroup
	wg.Add(runs)
	var done sync.WaitGroup
	for i := range runs {
		done.Go(func() {
			_, err := Run(ctx, Prompt(fmt.Sprintf("question %d", i)), Options{Model: barrierModel{&wg}, Mode: ModeNative, ConversationID: "c1", Store: store})
			if err != nil {
				t.Errorf("run %d: %v", i, err)
			}
		})
	}
	done.Wait()
	msgs, _ := store.Load(ctx, "c1")
	if len(msgs) != 2+2*runs {
		t.Fatalf("%d messages kept, want %d: %+v", len(msgs), 2+2*runs, msgs)
	}
	for i := range runs {
		q := fmt.Sprintf("question %d", i)
		found := false
		for j := 2; j+1 < len(msgs); j += 2 {
			if msgs[j].Content == q && msgs[j+1].Content == "answer to "+q {
				found = true
			}
		}
		if !found {
			t.Errorf("the exchange of run %d was lost: %+v", i, msgs)
		}
	}
}

// TestClearedDuringARun: a conversation cleared while a run continued it
// keeps the clear; the run says its exchange was not kept.
func TestClearedDuringARun(t *testing.T) {
	store := &MemoryStore{}
	ctx := context.Background()
	store.Save(ctx, "c1", []ptk.Message{{Role: ptk.RoleUser, Content: "hi"}})
	res, err := Run(ctx, Prompt("go on"), Options{Model: clearingModel{store}, Mode: ModeNative, ConversationID: "c1", Store: store})
	if !errors.Is(err, ErrConversationChanged) || !strings.Contains(err.Error(), "not kept") || res.Content != "done" {
		t.Errorf("Run = %+v, %v", res, err)
	}
	if msgs, _ := store.Load(ctx, "c1"); len(msgs) != 0 {
		t.Errorf("the cleared conversation holds %+v", msgs)
	}
}

// clearingModel clears the conversation, as ptk chat's /clear or ptk
// conversations rm would from another process, and answers.
type clearingModel struct{ store *MemoryStore }

func (m clearingModel) Generate(ctx context.Context, _ llm.Request) (*llm.Response, error) {
	m.store.Save(ctx, "c1", nil)
	return &llm.Response{Content: "done"}, nil
}
