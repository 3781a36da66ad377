package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm/llmtest"
)

// 1,000 runs at once, streamed and not, some ending at a timeout while a
// tool waits: all finish, and no goroutine is left behind.
func TestConcurrentRunsLeaveNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t)
	slow := simpleTool("slow", true, func(ctx context.Context, _ json.RawMessage) (ptk.Result, error) {
		select {
		case <-ctx.Done():
			return ptk.Result{}, ctx.Err()
		case <-time.After(time.Millisecond):
			return ptk.Result{Content: "ok"}, nil
		}
	})
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for i := range 1000 {
		wg.Go(func() {
			two := ptkCall("slow", `{"x": "a"}`) + ptkCall("slow", `{"x": "b"}`)
			m := llmtest.New(llmtest.Text(two), llmtest.Text("done"))
			o := Options{Model: m, Mode: ModePTK, Tools: []ptk.Tool{slow, weather(nil)}, StreamModel: i%2 == 0}
			if i%10 == 0 {
				m.Replies[1] = llmtest.Reply{Wait: true}
				o.Timeout = 20 * time.Millisecond
			}
			if i%4 == 1 {
				for e := range Stream(context.Background(), Prompt("go"), o) {
					if e.Kind == EventToolResult {
						break
					}
				}
				return
			}
			res, err := Run(context.Background(), Prompt("go"), o)
			switch {
			case i%10 == 0 && ptk.CodeOf(err) != ptk.Timeout:
				errs <- fmt.Errorf("run %d: %v, want a timeout", i, err)
			case i%10 != 0 && (err != nil || res.Content != "done"):
				errs <- fmt.Errorf("run %d: %v %+v", i, err, res)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
