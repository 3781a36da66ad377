// Package retry makes a provider call again after a failure worth retrying,
// with a growing, jittered pause or the pause the provider asked for. Every
// provider client shares it.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/ptkit/ptk/llm"
)

// MaxRetryAfter is the longest Retry-After a client waits for; a call the
// provider asks to delay longer fails with the provider's error.
const MaxRetryAfter = time.Minute

// Policy says how often and how long to wait. The zero value does not
// retry.
type Policy struct {
	// MaxRetries is how many times a call is made again.
	MaxRetries int
	// Base is the pause before the first retry, doubling after; Max caps it.
	Base, Max time.Duration
}

// Default is two retries, after about 0.5–1 s and 1–2 s.
var Default = Policy{MaxRetries: 2, Base: time.Second, Max: 8 * time.Second}

// ErrStopped is what an attempt returns when its caller stopped reading: it
// ends Do at once, without a retry.
var ErrStopped = errors.New("stream stopped by its caller")

// Do calls attempt until it succeeds, fails with an error that is not
// llm.Retryable, reports that it has started to deliver its answer (a
// stream: it cannot be made again), or has been made MaxRetries+1 times.
// Between attempts it waits what the provider asked (an *llm.Error's
// RetryAfter, up to MaxRetryAfter) or Backoff. A pause that would outlast
// ctx's deadline is not taken. Once ctx is done, Do returns ctx's error.
func (p Policy) Do(ctx context.Context, attempt func() (started bool, err error)) error {
	for n := 0; ; n++ {
		started, err := attempt()
		if err == nil || err == ErrStopped {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if started || n >= p.MaxRetries || !llm.Retryable(err) {
			return err
		}
		wait := p.Backoff(n)
		if e, ok := errors.AsType[*llm.Error](err); ok && e.RetryAfter > 0 {
			if e.RetryAfter > MaxRetryAfter {
				return err
			}
			wait = e.RetryAfter
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w while waiting to retry after: %v", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// Backoff is the pause before retry n+1: "equal jitter", uniform between
// half of Base·2ⁿ (capped at Max) and all of it, so that clients spread out
// but none retries at once.
func (p Policy) Backoff(n int) time.Duration {
	d := p.Base
	for ; n > 0 && d < p.Max; n-- {
		d *= 2
	}
	if d = min(d, p.Max); d <= 0 {
		return 0
	}
	return d/2 + rand.N(d/2+1)
}

// After is how long a response asks to wait: retry-after-ms (OpenAI,
// Anthropic), or Retry-After in seconds or as an HTTP date, bounded to a
// day so that it cannot overflow. Zero means it did not say.
func After(h http.Header, now time.Time) time.Duration {
	const ceiling = 24 * time.Hour
	seconds := func(s float64) time.Duration {
		return time.Duration(min(s, ceiling.Seconds()) * float64(time.Second))
	}
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return seconds(ms / 1000)
	}
	v := h.Get("Retry-After")
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return seconds(s)
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), ceiling)
	}
	return 0
}
