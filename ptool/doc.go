// Package ptool is ptk's typed functions that a model executes: code decides
// what to ask, and calls the model like a function. A ptool is a name, a
// doc comment that serves as the prompt, and Go types for its input and
// output; calling it formats a prompt from the input, asks a model, reads the
// answer back into the output type and records what happened.
//
//	classify := ptool.New[Review, Sentiment]("classify_sentiment",
//		"Classify the emotional tone of the review.", ptool.WithModel(m))
//	s, err := classify.Call(ctx, Review{Text: "I love it!"})
//
// The input and output JSON Schemas come from the Go types, by the rules of
// tool.New (json names, `jsonschema:"..."` descriptions, `enum:"a,b"` tags,
// required unless omitempty or a pointer); Spec shows what the model is given:
// the signature, the output's schema as text, the examples, the prompt.
//
// An answer is read back in one of three modes: ModeStructured asks the
// provider for JSON that fits the schema (OpenAI's response_format json_schema,
// Gemini's responseJsonSchema, a forced tool call on Anthropic), ModeProtocol asks any model to write
// the answer between <answer> tags and reads it leniently (fences, prose
// around it, single quotes, trailing commas, "0.95" for a number, an enum
// value in another letter case, each repair recorded, nothing guessed), and
// ModeAuto, the default, uses structured output where the provider has it and
// the protocol otherwise, remembering a model that refused. Servers that take
// a request for structured output and ignore it (some OpenAI-compatible
// servers and proxies) are read too: an answer between <answer> tags, or a
// bare output that fits the schema exactly, each a recorded repair; after
// one reply that cannot be read, ModeAuto asks again in the protocol and
// remembers the model (WithMemory). An answer that
// does not fit the schema is asked again with what was wrong, up to
// WithMaxAttempts; a model may abstain (ErrAbstained).
//
// Checks are validators that re-ask: WithCheck runs a Go function on each
// answer that fits the schema, and an error it returns is fed back to the
// model with its message and recorded in the attempt (Retry asks again
// with a hint, Stop ends the call). A ptools file declares checks too
// (CheckDef: pattern, range, enum, length, and CEL expressions over the
// input and the output with package ptool/celcheck).
//
// CallStream reads the output as the model writes it: it yields the typed
// output each time a field or an item is complete (a string never half),
// and never a value a field later loses within an attempt.
//
// Distill puts plain code in front of a ptool: the code answers first and
// returns ErrFallback when it is not sure, and only then is the model asked.
//
// Every call leaves a Record (input, output, attempts with their problems and
// repairs, model, usage, cost, latency, who answered) given to the observer
// the caller registered with WithObserver. A Registry lists ptools by name; a
// ptool is also a ptk.Tool, so an agent can call it. Load reads declarative
// ptools from a JSON file.
package ptool
