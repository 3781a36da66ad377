// Package react is a ReAct agent over ptools and tools: given a goal, a model
// thinks, acts (calls one tool or ptool), observes what it returned, and
// goes on until it writes an answer between <answer> and </answer> (or a
// message without an action), or a step limit is reached.
//
// Actions are read by the project's parser, in whatever dialect the model
// writes them, or as the provider's native calls (Options.Mode); an action
// that cannot run (an unknown tool, arguments that do not fit) is an
// observation that says what was wrong, and the model corrects it.
//
// Every run leaves a Trajectory: the goal, the steps (thought, action,
// observation, and a ptool action's Record of its own model calls, whose
// usage and cost the trajectory's include), the final answer and whether
// it succeeded, as JSON that round-trips. Trajectory.PTP renders it as Program Trace Prompting text
// for demonstrations (Options.Examples takes trajectories as few-shot
// examples), and Trajectory.Trace turns its actions into a workflow.Trace,
// the path from exploration to a fixed workflow. Options.Echo shows the
// steps as they happen.
package react
