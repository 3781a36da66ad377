package retry

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ptkit/ptk/llm"
)

func TestBackoff(t *testing.T) {
	p := Policy{Base: 100 * time.Millisecond, Max: time.Second}
	for n, bound := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		bound *= time.Millisecond
		for range 100 {
			if d := p.Backoff(n); d < bound/2 || d > bound {
				t.Fatalf("Backoff(%d) = %v, want in [%v, %v]", n, d, bound/2, bound)
			}
		}
	}
	if d := p.Backoff(1000); d < 500*time.Millisecond || d > time.Second {
		t.Errorf("Backoff(1000) = %v", d)
	}
}

func TestAfter(t *testing.T) {
	now := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		header http.Header
		want   time.Duration
	}{
		{http.Header{}, 0},
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After": {"Mon, 10 Mar 2025 12:00:30 GMT"}}, 30 * time.Second},
		{http.Header{"Retry-After": {"Mon, 10 Mar 2025 11:00:00 GMT"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"1e300"}}, 24 * time.Hour},
		{http.Header{"Retry-After-Ms": {"250"}}, 250 * time.Millisecond},
	} {
		if got := After(tt.header, now); got != tt.want {
			t.Errorf("After(%v) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func TestDo(t *testing.T) {
	p := Policy{MaxRetries: 2, Base: time.Millisecond, Max: time.Millisecond}
	busy := &llm.Error{Kind: llm.ErrServer}
	cases := []struct {
		name    string
		errs    []error
		started bool
		calls   int
		want    error
	}{
		{"success", []error{nil}, false, 1, nil},
		{"retried then success", []error{busy, busy, nil}, false, 3, nil},
		{"gives up", []error{busy, busy, busy, busy}, false, 3, busy},
		{"not retryable", []error{&llm.Error{Kind: llm.ErrAuth}}, false, 1, llm.ErrAuth},
		{"started streams are not retried", []error{busy}, true, 1, busy},
		{"stopped", []error{ErrStopped}, false, 1, ErrStopped},
	}
	for _, c := range cases {
		n := 0
		err := p.Do(context.Background(), func() (bool, error) {
			n++
			return c.started, c.errs[n-1]
		})
		if n != c.calls || !errors.Is(err, c.want) && err != c.want {
			t.Errorf("%s: %d calls, err %v; want %d, %v", c.name, n, err, c.calls, c.want)
		}
	}
	// Retry-After beyond MaxRetryAfter is not waited for.
	n := 0
	err := p.Do(context.Background(), func() (bool, error) {
		n++
		return false, &llm.Error{Kind: llm.ErrRateLimited, RetryAfter: 2 * MaxRetryAfter}
	})
	if n != 1 || !errors.Is(err, llm.ErrRateLimited) {
		t.Errorf("long Retry-After: %d calls, %v", n, err)
	}
	// A canceled context ends the pause.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	slow := Policy{MaxRetries: 5, Base: 10 * time.Second, Max: 10 * time.Second}
	start := time.Now()
	err = slow.Do(ctx, func() (bool, error) { return false, busy })
	if !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Errorf("canceled: %v after %v", err, time.Since(start))
	}
}
