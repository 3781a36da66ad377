package agent

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
)

// DefaultCompactAt is the fill of the context window past which a run
// compacts its conversation before the next model call.
const DefaultCompactAt = 0.8

// Fill is how full the model's context window is.
type Fill struct {
	// Tokens is the request's tokens: estimated before a model call (the
	// estimate corrected by what the provider counted for the earlier
	// calls), or, when Measured, the prompt and answer of the call just
	// made as the provider counted them.
	Tokens int `json:"tokens"`
	// Window is the context window, in tokens.
	Window   int  `json:"window"`
	Measured bool `json:"measured,omitempty"`
}

// Percent is the fill as a whole percentage.
func (f Fill) Percent() int {
	if f.Window <= 0 {
		return 0
	}
	return int(math.Round(100 * float64(f.Tokens) / float64(f.Window)))
}

func (f Fill) String() string {
	return fmt.Sprintf("%d%% of %d tokens", f.Percent(), f.Window)
}

// setupWindow finds the model's context window: Options.ContextWindow, or
// what the model can tell (llm.ContextWindowOf). A model that cannot be
// asked leaves it unknown.
func (r *runner) setupWindow(ctx context.Context) {
	o := &r.opts
	r.ratio = 1
	switch {
	case o.ContextWindow > 0:
		r.window = llm.Window{Tokens: o.ContextWindow, Source: "Options.ContextWindow"}
	case o.ContextWindow == 0:
		if w, err := llm.ContextWindowOf(ctx, o.Model, o.ModelName); err == nil && w.Known() {
			r.window = w
		}
	}
}

// resultCap is the cap on a tool result's bytes when the run has the
// default one: with a small window, a quarter of it (at about 3 bytes a
// token), so that one result cannot fill it.
func resultCap(window int) int {
	if window <= 0 {
		return DefaultMaxResultBytes
	}
	return max(min(DefaultMaxResultBytes, window*3/4), 1024)
}

// toolTokens estimates what the tool definitions sent natively take.
func (r *runner) toolTokens() int {
	if r.mode == ModePTK || len(r.infos) == 0 {
		return 0
	}
	if r.nativeToolTokens == 0 {
		r.nativeToolTokens = llm.EstimateTools(r.infos)
	}
	return r.nativeToolTokens
}

// estimate is the next request's tokens: the rendered conversation (each
// message counted once, turn.History.Tokens) and the native tools,
// corrected by what the provider counted for the earlier requests.
func (r *runner) estimate() int { return r.corrected(r.rawEstimate()) }

func (r *runner) rawEstimate() int { return r.history.Tokens() + r.toolTokens() + 3 }

func (r *runner) corrected(n int) int { return int(math.Ceil(float64(n) * r.ratio)) }

// fixedTokens estimates what is sent with every request whatever the
// conversation: the system prompt and the tools.
func (r *runner) fixedTokens() int {
	n := r.toolTokens() + 3
	if out := r.history.Rendered(); len(out) > 0 && out[0].Role == ptk.RoleSystem {
		n += llm.EstimateMessage(out[0])
	}
	return r.corrected(n)
}

// threshold is the request size past which the conversation is compacted.
func (r *runner) threshold() int { return int(r.opts.CompactAt * float64(r.window.Tokens)) }

// limit is the largest request sent: the window less room for the answer.
func (r *runner) limit() int {
	reserve := r.opts.MaxOutputTokens
	if reserve <= 0 {
		reserve = max(r.window.Tokens/16, 64)
	}
	return r.window.Tokens - reserve
}

// learn corrects the estimate by what the provider counted for a request
// estimated at raw tokens (before correction).
func (r *runner) learn(raw int, u ptk.Usage) {
	if raw <= 0 || u.PromptTokens <= 0 {
		return // a provider that counted nothing (Ollama's cached prompts)
	}
	r.ratio = min(max(float64(u.PromptTokens)/float64(raw), 0.25), 4)
}

// fit makes the next request fit the window before it is sent: past
// CompactAt of it the conversation is compacted, and a request that still
// does not leave room for the answer is compacted harder, down to the
// system prompt, the notes and the latest turn; what cannot fit even then
// ends the run with ptk.ContextFull instead of being sent. It reports the
// fill as an EventContext.
func (r *runner) fit(ctx context.Context) error {
	if !r.window.Known() {
		return nil
	}
	o := &r.opts
	est := r.estimate()
	if !o.NoCompact && est > r.threshold() {
		if _, err := r.compact(ctx, CompactThreshold, false); err != nil {
			return err
		}
		est = r.estimate()
	}
	if !o.NoCompact && est > r.limit() {
		if _, err := r.compact(ctx, CompactThreshold, true); err != nil {
			return err
		}
		est = r.estimate()
	}
	if est > r.limit() {
		return r.contextFull(nil)
	}
	r.sent = r.rawEstimate()
	r.event(Event{Kind: EventContext, Iteration: r.res.Iterations, Fill: &Fill{Tokens: est, Window: r.window.Tokens}})
	return nil
}

// measured reports the fill the provider counted for the call just made.
func (r *runner) measured(u ptk.Usage) {
	r.learn(r.sent, u)
	if r.window.Known() && u.PromptTokens > 0 {
		r.event(Event{Kind: EventContext, Iteration: r.res.Iterations,
			Fill: &Fill{Tokens: u.PromptTokens + u.CompletionTokens, Window: r.window.Tokens, Measured: true}})
	}
}

// tooLong learns from a provider's context-length error: the request was
// larger than the window, whatever the estimate said, and the error may
// say how large the window is.
func (r *runner) tooLong(err error) {
	if r.sent == 0 {
		r.sent = r.rawEstimate()
	}
	if n := windowFromError(err.Error()); n > 0 && (!r.window.Known() || n < r.window.Tokens) {
		r.window = llm.Window{Tokens: n, Source: "the provider's error"}
	}
	if !r.window.Known() && r.sent > 0 {
		r.window = llm.Window{Tokens: r.corrected(r.sent) * 9 / 10, Source: "the provider's error"}
	}
	if r.sent > 0 && r.window.Known() {
		// What was sent was at least the window: count so from now on.
		r.ratio = min(max(r.ratio, 1.05*float64(r.window.Tokens)/float64(r.sent)), 4)
	}
}

// windowRE find the window a provider's context-length error names.
var windowRE = []*regexp.Regexp{
	regexp.MustCompile(`maximum context length is (\d+)`),  // OpenAI, vLLM, DeepSeek
	regexp.MustCompile(`maximum model length of (\d+)`),    // vLLM V1
	regexp.MustCompile(`tokens > (\d+) maximum`),           // Anthropic
	regexp.MustCompile(`number of tokens allowed \((\d+)`), // Gemini
	regexp.MustCompile(`(\d+) maximum context length`),     // Mistral
	regexp.MustCompile(`num_ctx[ =](\d+)`),                 // llm/ollama
	regexp.MustCompile(`context (?:size|length|window) (?:is |of )?(\d+)`),
}

func windowFromError(msg string) int {
	for _, re := range windowRE {
		if m := re.FindStringSubmatch(msg); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// contextFull is the error of a conversation that does not fit the
// window: what takes the room, and how to make more.
func (r *runner) contextFull(cause error) error {
	w := r.window.Tokens
	fixed := r.fixedTokens()
	est := r.estimate()
	msg := fmt.Sprintf("the conversation does not fit the model's context window of %d tokens", w)
	if r.window.Source != "" {
		msg += " (" + r.window.Source + ")"
	}
	switch {
	case fixed >= r.threshold():
		msg += fmt.Sprintf(": the system prompt and the %d tools' definitions alone take about %d tokens; give fewer tools, or the model a larger window", len(r.infos), fixed)
	case cause != nil:
		msg += fmt.Sprintf(", and the provider refused it again after it was compacted (%v); give the model a larger window, or start a new conversation", cause)
	default:
		msg += fmt.Sprintf(" even after compacting it: the request is about %d tokens (system prompt and tools %d), and the latest messages alone are too long; give the model a larger window, or start a new conversation", est, fixed)
	}
	if w > 0 && r.window.Trained > w {
		msg += fmt.Sprintf(" (the model was trained for %d)", r.window.Trained)
	}
	return ptk.NewError(ptk.ContextFull, msg, cause)
}
