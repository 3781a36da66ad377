package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ptkit/ptk"
)

func TestTimeout(t *testing.T) {
	slow := ptk.NewTool(ptk.ToolInfo{Name: "slow"}, func(ctx context.Context, _ json.RawMessage) (ptk.Result, error) {
		<-ctx.Done()
		return ptk.Result{Content: "partial"}, ctx.Err()
	})
	wrappedTool := Wrap(slow, Timeout(10*time.Millisecond), Limit(100, 10))
	if wrappedTool.Info().Name != "slow" {
		t.Errorf("Info changed: %+v", wrappedTool.Info())
	}
	res, err := wrappedTool.Run(context.Background(), nil)
	if err != nil || !res.IsError || !strings.HasPrefix(res.Content, "slow timed out after 10ms; its output so far:\npartial") {
		t.Errorf("timeout: %+v, %v", res, err)
	}
	// Canceled from outside: the context's error, not a result.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := wrappedTool.Run(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
	if _, isWrapped := Wrap(slow, Timeout(0)).(wrapped); isWrapped {
		t.Error("Timeout(0) wraps")
	}
}
