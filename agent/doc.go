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
