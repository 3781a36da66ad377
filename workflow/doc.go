// Package workflow runs fixed programs of ptool calls: a Trace is a goal and
// a list of steps, each naming a ptool and its arguments, where an argument
// may be a typed reference to an earlier step's output,
//
//	{"$ref": "step_0", "path": "/items/0"}
//
// (a JSON Pointer into that output), never a string that happens to start
// with "$". A Trace is JSON that round-trips exactly, so a plan written by a
// model, by hand or by an earlier run reads back as it was.
//
// Check finds, before any token is spent, every problem a trace has against
// a ptool.Registry at once: unknown ptools, references to missing or later
// steps, paths that the referenced output's schema does not have, and
// arguments (literal, or the referenced output's type) that do not fit the
// ptool's input schema. Run checks, then runs the steps in dependency order,
// independent steps concurrently up to a bound, and returns the finished
// trace with each step's status, result, attempts, usage, cost and the
// ptool's Record; Stream reports each step as an Event.
//
// A step may call a plain tool too (ptool.FromTool puts one in the
// registry): its result is its output, its JSON or its text as a string.
// A ReAct trajectory becomes a trace of the same calls (react's
// Trajectory.Trace), and Reset makes a finished trace one to run again.
//
// Plan is the program generator: a model writes a trace for a goal from a
// registry's signatures and docs (structured output), the trace is checked,
// and a plan with problems is asked again with them. GoProgram renders a
// trace as a Go program that calls the ptools by name through a registry
// (with Call and At), for when code, not a model, should decide what to
// call; the program takes -model, -base-url, -api-key and -models, or
// their PTK_ variables, as ptk does.
package workflow
