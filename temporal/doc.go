// Package temporal runs ptk's agent loop, ReAct agents and workflows of
// ptools as Temporal workflows, so that a run outlives the process that
// started it: each model call and each tool or ptool call is an activity,
// retried by ptk's error classes; the conversation and the record of the run
// are workflow state, replayed deterministically; an approval is a signal
// the run waits for at no cost; a cancel request cancels the run; a query
// reads its progress.
//
// It is a module of its own (github.com/ptkit/ptk/temporal), so that users of
// ptk's core never download the Temporal SDK.
//
// # Workers and runs
//
// A Worker holds what runs the activities: the models (by name), the tools,
// the ptools, the approval policy and the stores. Register registers its
// workflows and activities with a Temporal worker; Start, Approve, Cancel
// and Status are what a client does with a run. Command ptk-temporal
// (ptk worker, ptk run --temporal, ptk runs) is built on them.
//
// # What runs once
//
// Temporal runs an activity at least once: a worker that dies in the middle
// of a tool call leaves the call to be retried on another. A tool that is
// not read-only must not take effect twice, so before it runs, its call is
// entered in the Worker's Ledger (a table in the shared trace store) under
// the run's and the call's ids, and after it its result is: a retry finds
// the entry and does not run the tool again. It answers the call with the
// stored result when the first run finished, and otherwise (the worker died
// in the middle of the call) with an error that tells the model the call
// was interrupted and its effect is unknown. So a mutating tool runs at most
// once per call; what it did before its worker died cannot be known or
// undone by ptk (see docs/temporal.md). Read-only tools and model calls are
// simply run again.
package temporal
