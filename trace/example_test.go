package trace_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ptkit/ptk/trace"
)

func Example() {
	dir, _ := os.MkdirTemp("", "traces")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := trace.Open(ctx, filepath.Join(dir, "traces.db")) // or a postgres:// URL
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	w := trace.NewWriter(s, os.Stderr)
	w.Record(&trace.Record{
		Run: trace.Run{Kind: trace.KindAgent, Model: "qwen3:8b", Status: trace.StatusOK, Input: "What is in go.mod?"},
		ToolCalls: []trace.ToolCall{{Tool: "read_file", Args: []byte(`{"path":"go.mod"}`), Result: "module example.com/m",
			Outcome: trace.OutcomeRan, Duration: trace.Millis(2 * time.Millisecond)}},
	})
	w.Close(0) // writes what is queued

	runs, _ := s.List(ctx, trace.Filter{Kind: trace.KindAgent})
	for _, r := range runs {
		fmt.Println(r.Kind, r.Model, r.Status, r.NumToolCalls)
	}
	st, _ := s.Stats(ctx, trace.Filter{})
	fmt.Println(st.Tools[0].Name, st.Tools[0].Calls, st.Tools[0].SuccessRate, time.Duration(st.Tools[0].P50))
	// Output:
	// agent qwen3:8b ok 1
	// read_file 1 1 2ms
}
