// Package agent is ptk's loop: a conversation goes to a model, the model
// calls tools, the loop runs them and feeds the results back, until the model
// answers or a limit is reached.
//
// Run returns the Result of a run; Stream reports every step as an Event
// while the run goes on — the one way to watch a run. Both take the
// conversation so far (Prompt makes one from a single prompt). Options
// choose the model, the tools, the mode and the limits. Each model call is
// one turn of package turn, whose History renders every message once, so a
// long run costs each call its new turn, not its whole past.
//
// # Modes
//
// In ModePTK the model is taught the PTK text protocol in its system prompt
// and its calls are read from its text by package protocol, in whatever
// format it drifts into. In ModeNative the tools go to the provider as
// function definitions and its native calls are read back (and, when a
// server returns the calls as text because it has no tool parser, they are
// read from the text). ModeAuto, the default, starts native and switches to
// the protocol when the provider rejects tools; with Options.NativeTools (a
// memory the caller owns) later runs remember it.
//
// # The context window
//
// A run counts each request before it sends it, against the model's
// context window (Options.ContextWindow, or what the model tells:
// llm.ContextWindowOf), correcting its estimate by the provider's usage,
// and reports the fill as an EventContext. Past CompactAt of the window it
// compacts the conversation: the older messages are replaced, for the
// model, by notes the same model writes (the task and latest request kept
// as the user gave them, the files touched listed, the latest turns kept as
// they were, a tool result never parted from its call), reported as an
// EventCompact and kept in Result.Compactions; the conversation itself
// keeps every message, the notes appended as a message whose Compacted
// counts what they stand for. A provider's context-length error compacts
// and retries once; what cannot fit ends the run with ptk.ContextFull
// before it is sent. Compact compacts a conversation on demand.
//
// # Errors are data
//
// A call the model gets wrong (an unknown tool, invalid arguments, a call
// that cannot be read) and a tool that fails go back to the model as error
// results it can correct; every call gets an answer, in call order. Only
// limits, cancellation and model failures end a run (and, with
// Options.Strict, the first bad call). The error is then a *ptk.Error whose
// Code says why (errors.Is(err, ptk.MaxIterationsReached)), and the Result
// holds everything done until then.
package agent
