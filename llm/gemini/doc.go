// Package gemini is a client for Google's Gemini API
// (generativelanguage.googleapis.com, v1beta): POST
// models/{model}:generateContent, and :streamGenerateContent?alt=sse to
// stream. A [Client] is an [llm.Model] and an [llm.Streamer]:
//
//	model := gemini.New("", gemini.WithAPIKey(os.Getenv("GEMINI_API_KEY")))
//	resp, err := model.Generate(ctx, llm.Request{Model: "gemini-2.5-flash", Messages: msgs})
//
// It maps [llm.Request] to the API's contents: system messages become the
// systemInstruction; assistant turns are role "model", their calls
// functionCall parts; tool results are functionResponse parts in a turn of
// role "user" (the role the API's Content documents, "user" or "model"),
// {"content": text} or, for a failed tool, {"error": text}; consecutive
// turns of one role are merged, as the API wants them to alternate. Gemini
// matches results to calls by name and order, or by the ID it gave a
// call, when it gave one: a call's ID is sent back unless it is a "call_N"
// this client made up. The first call of each replayed turn carries the thought
// signature the API documents for calls whose own signature the client did
// not keep ("skip_thought_signature_validator"): Gemini 3 rejects a call
// without one, and ptk keeps none. Tool parameters are sent as JSON Schema,
// unchanged, in parametersJsonSchema; [WithOpenAPISchema] converts them to
// the OpenAPI subset of "parameters" instead. ToolChoice maps to the
// function-calling mode (AUTO, NONE, ANY, or ANY with one allowed name).
// [llm.Request.ResponseSchema] asks for a JSON answer: responseMimeType
// application/json with the schema in responseJsonSchema (responseSchema,
// converted, with [WithOpenAPISchema]).
//
// The answer maps back to [llm.Response]: text, thought parts as
// Reasoning (the API sends thought summaries only to a request that asks,
// which this client does not), function calls (ID "call_N" when the API gave none), usage
// (thinking tokens count as output; cached tokens are part of the prompt
// and counted apart too), the finish reason as written ("STOP",
// "MAX_TOKENS", "SAFETY"...) and the model version. A stream yields text
// as it arrives, each call whole, and the usage last; [llm.Collect] turns
// it into the Response that Generate would have returned.
//
// Every failure is an *[llm.Error]: a wrong key (a 400 with reason
// API_KEY_INVALID, or 401/403) is [llm.ErrAuth], an unknown model
// [llm.ErrModelNotFound], RESOURCE_EXHAUSTED [llm.ErrRateLimited] with the
// RetryInfo delay in RetryAfter, a blocked prompt [llm.ErrBadRequest]
// naming the reason. Rate limits, server failures and broken connections
// are retried twice by default; a stream only before its first chunk. A
// canceled or expired context ends a call at once with an error that wraps
// ctx.Err().
package gemini
