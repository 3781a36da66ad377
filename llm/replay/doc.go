// Package replay records a model's calls to a file and answers them again
// from it, so that a test of an agent runs without the network, the same way
// every time.
//
// Record the calls of a real run once:
//
//	model, f, err := replay.RecordFile(openai.New(url), "testdata/run.jsonl")
//	defer f.Close()
//	res, err := agent.Run(ctx, prompt, agent.Options{Model: model, ...})
//
// then, in the test, answer them from the recording with a [Player]:
//
//	model, err := replay.Open("testdata/run.jsonl")
//	res, err := agent.Run(ctx, prompt, agent.Options{Model: model, ...})
//
// A run that asks the same things gets the same answers, value for value. A
// run that asks something the recording does not hold fails with [ErrMiss],
// in an error that says which recorded request is the closest and where it
// differs: where the agent went another way.
//
// # The file
//
// A recording is JSON Lines, one line per call, appended as calls end:
//
//	{"key": "…", "request": {…}, "response": {…}, "time": "2025-01-02T15:04:05Z"}
//	{"key": "…", "request": {…}, "stream": true, "chunks": [{…}, …], "time": "…"}
//	{"key": "…", "request": {…}, "error": {"kind": "rate_limited", "status": 429, "message": "…", "retry_after_ms": 2000}, "time": "…"}
//
// A streamed call that failed has both its chunks and its error. Error kinds
// are auth, model_not_found, tools_unsupported, rate_limited, server,
// connection, bad_request and bad_response (the llm.Err* kinds), canceled and
// deadline_exceeded (the context's errors), and other (any other error, which
// replays as an error with the same message). A line has "no_native_tools":
// true when the recorded model said it does not take native tools
// ([llm.ToolSupporter]), "price" and "base_url" when it had them
// ([llm.PriceOf], [llm.BaseURLOf]); a Player then says so too, its price and
// base URL found through its Unwrap as a recorder's are. Tool-call arguments and
// tool parameters are written as JSON when that reads back byte for byte,
// as a JSON string otherwise.
//
// # The key
//
// A call is found by its key: the hex SHA-256 (its first 16 bytes) of the
// JSON of the request's model, messages (role, content, calls, call_id,
// tool, is_error; not raw, and of each call only id, tool and args), the
// flattened prompt when the caller set one, tools
// (name, description, parameters), tool_choice, temperature, max_tokens, stop
// and the extra fields, with the calls' args, the tools' parameters and the
// extra fields' values re-encoded with sorted keys (numbers as written) when
// they are valid JSON. Whether the call was
// streamed is not in it: a recording made streaming replays for a run that
// does not stream, and the other way round. The "key" written in the file is
// for people; a Player computes it again from the "request".
//
// The same request made several times gets the recorded answers in order,
// then the last one again.
//
// # What is not replayed
//
// A Player has the recorded model's base URL, so a caller that remembers
// which models reject native tools (llm.NativeTools) remembers a Player's
// decisions and the recorded model's together, and a recording made after
// the same process had learned that a model takes no native tools starts
// differently from its replay. The recorded Cost replays, and so does the
// price an agent's MaxCost look-ahead uses. Empty slices come back nil, RetryAfter to the millisecond, invalid UTF-8
// in text as U+FFFD, and an *llm.Error that another error wrapped without the
// wrapping. A stream its caller stopped reading is recorded as far
// as it was read.
package replay
