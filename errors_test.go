package ptk_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ptkit/ptk"
)

func TestErrorIsAndAs(t *testing.T) {
	cause := errors.New("dial tcp: connection refused")
	err := fmt.Errorf("run: %w", ptk.NewError(ptk.LLMCallFailed, "", cause))

	if !errors.Is(err, ptk.LLMCallFailed) {
		t.Fatalf("errors.Is(%v, LLMCallFailed) = false", err)
	}
	if errors.Is(err, ptk.Timeout) {
		t.Fatalf("errors.Is(%v, Timeout) = true", err)
	}
	if !errors.Is(err, cause) {
		t.Fatalf("cause lost from the chain")
	}
	var perr *ptk.Error
	if !errors.As(err, &perr) || perr.Code != ptk.LLMCallFailed || perr.Message != cause.Error() {
		t.Fatalf("errors.As gave %#v", perr)
	}
	if got := ptk.CodeOf(err); got != ptk.LLMCallFailed {
		t.Fatalf("CodeOf = %q", got)
	}
}

func TestErrorContextCodes(t *testing.T) {
	timeout := ptk.NewError(ptk.Timeout, "run took longer than 30s", nil)
	if !errors.Is(timeout, context.DeadlineExceeded) {
		t.Error("Timeout does not match context.DeadlineExceeded")
	}
	canceled := ptk.NewError(ptk.Canceled, "", context.Canceled)
	if !errors.Is(canceled, context.Canceled) || errors.Is(canceled, context.DeadlineExceeded) {
		t.Error("Canceled matches the wrong context errors")
	}
	if got := ptk.CodeOf(fmt.Errorf("x: %w", context.DeadlineExceeded)); got != ptk.Timeout {
		t.Errorf("CodeOf(deadline) = %q, want TIMEOUT", got)
	}
	if got := ptk.CodeOf(errors.New("plain")); got != "" {
		t.Errorf("CodeOf(plain) = %q, want empty", got)
	}
}

func TestCodesAreTheDesignsStrings(t *testing.T) {
	want := []string{"TOOL_NOT_FOUND", "INVALID_TOOL_CALL", "MAX_ITERATIONS_REACHED",
		"MAX_TOOL_CALLS_REACHED", "TOOL_EXECUTION_FAILED", "LLM_CALL_FAILED", "PARSE_ERROR",
		"DUPLICATE_TOOL_CALL", "TIMEOUT", "CANCELED", "TOOL_CALL_DENIED", "BUDGET_EXCEEDED", "INVALID_CONFIG", "CONTEXT_FULL"}
	if len(ptk.Codes) != len(want) {
		t.Fatalf("%d codes, want %d", len(ptk.Codes), len(want))
	}
	for i, c := range ptk.Codes {
		if string(c) != want[i] || c.Error() != want[i] {
			t.Errorf("code %d = %q, want %q", i, c, want[i])
		}
	}
}

func ExampleError() {
	err := fmt.Errorf("agent: %w", ptk.NewError(ptk.MaxIterationsReached, "10 model calls made", nil))
	fmt.Println(errors.Is(err, ptk.MaxIterationsReached))
	var perr *ptk.Error
	if errors.As(err, &perr) {
		fmt.Println(perr.Code, "-", perr.Message)
	}
	// Output:
	// true
	// MAX_ITERATIONS_REACHED - 10 model calls made
}
