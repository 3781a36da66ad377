// Package protocol is ptk's text protocol: the Formatter that writes what a
// model reads (system prompt, tool definitions, a flattened conversation, tool
// results) and the Parser that reads what a model writes (calls in PTK tags and
// in the other formats models drift into, repaired, validated and coerced
// against each tool's JSON Schema), whole or streamed.
//
// # The protocol
//
// A model calls a tool by writing one JSON object between tags:
//
//	<PTK_CALL>
//	{"tool": "read_file", "args": {"path": "go.mod"}, "reasoning": "why"}
//	</PTK_CALL>
//
// Several calls are several blocks, or one <PTK_BATCH>[...]</PTK_BATCH>.
// Results go back as <PTK_RESULT id="…" tool="…">…</PTK_RESULT> (errors as
// PTK_ERROR), one per call, in call order. A reply without a call is the
// final answer. [PTK] writes all of this; [Neutralize] (and a parser's own,
// [Parser.Neutralize], which knows its tools) keeps data from ever reading as
// protocol: not as a result that ends early, and not as a call in any
// dialect the parser reads, wherever a model repeats it.
//
// # Reading replies
//
// A [Parser] accepts PTK in any letter case and the formats models were
// trained on: Hermes/Qwen <tool_call> and its wrapper variants, Qwen3-Coder
// and Claude XML, Mistral [TOOL_CALLS], Llama <|python_tag|>, pythonic
// [f(a=1)] lists, GLM, Gemma and FunctionGemma, Kimi, DeepSeek and Harmony
// tokens, functionary, fenced and bare JSON. Inside a call it reads key
// aliases, arguments encoded as a JSON string, and lenient JSON (see
// [RepairJSON]: single quotes, comments, typographic quotes, a
// detokenizer's ▁ or Ġ for spaces), never changing valid JSON. It finds where a call ends by its structure, so a closing tag
// inside a string argument is part of the string.
//
// It does not read as calls: reasoning (<think>, Harmony's analysis channel),
// code fences and inline code that document the protocol, bare or fenced
// JSON that does not name a declared tool, prose that mentions a tool or a
// tag, and a call cut off at the end of the reply (reported as
// [DiagTruncated], never run).
//
// # Calls as models without a protocol write them
//
// Models asked for calls in prose prompts (the Berkeley Function Calling
// Leaderboard's) write them in habits of their own; the dev corpus of 19
// models' replies (docs/bfcl-replay.md) showed these, and the parser reads
// each as a class, where the first call names a declared tool:
//
//   - bare calls one after another on a line, f(a=1); g(b=2); or f(a=1),
//     g(b=2), or one a line joined by commas, inside a fence too. The line
//     must hold nothing but the calls (a trailing ';' is part of them):
//     "f(a=1), which returns 2" is prose. Calls in a tuple on a line of
//     their own, (f(a=1), g(b=2)), read the same; prose in parentheses,
//     (f(a=1) is 2), is prose.
//   - calls written as strings: ['f(a=1)', "g(b=2)"], a string holding
//     several ('f(a=1), g(b=2)'), or 'f(a=1)' alone on its line. The call is
//     read from the text between the quotes as written, so an argument in
//     the same quote ('f(a='x')'), a closing quote left out, or an escaped
//     quote inside read as meant, and so does the name alone quoted,
//     ['f'(a=1)]. A list holding anything else is text.
//   - a list that names the tool, then gives its arguments: ['f', {'a': 1}],
//     [f, a=1], or a list of such pairs.
//   - calls combined in an expression, [f(a=1) + f(a=2)], [f(a=1)][0]: each
//     call is the list's, the operators are not applied (noted on the call).
//   - a fence holding a list of calls of declared tools is calls whatever
//     prose or other code surrounds it (Gemma explains its list after the
//     fence). A fence holding any other shape (JSON, tags, a bare call) and
//     followed by prose stays an example, as before: documentation is
//     written that way, and a list is what a model asked for calls writes.
//   - a call written as another's argument, f(x=g(y=1)), is read and
//     reported ([DiagNestedCall]), and the outer call does not run: its
//     argument would be the inner call's text, not its result. The model is
//     told to call g first.
//   - a message header after what the reply wrote (<|im_start|>user,
//     <|start_header_id|>assistant<|end_header_id|>, <start_of_turn>user,
//     at the start of a line or after another token) ends the reply: the
//     model went on past its turn, and what follows is a conversation it
//     made up, read as nothing ([DiagPastTurn]). A header before anything
//     is the reply's own, dropped; one in a sentence is text. Neutralize
//     spells a header in data differently: a reply quoting it would end
//     there.
//   - a wrapper's opener followed by another opener (Hermes 2 Pro writes a
//     closer as an opener) is stray: the call is the second's.
//   - an apostrophe between two letters in a single-quoted string ('It's')
//     is part of it, and a subscripted name given as a value, data['x'], is
//     its text, as a bare name is.
//
// Not read, on purpose: arithmetic in an argument (radius=2*5) is not
// computed, so the call is not read (SGLang's reader rejects it too, and
// its test is among the peer cases); calls inside code (print(f(a=1)),
// x = f(a=1)) are code.
//
// # Repetition loops
//
// A model in a degenerate loop (usually a small or local one) writes the
// same call, or call after call, until the token limit cuts it off. A reply
// is a repetition loop ([DiagRepetitionLoop]) when it ends in a call cut off
// at the end of the output after at least 8 complete calls or after 3
// identical calls in a row (same tool, same arguments), or when it ends in
// 10 identical calls in a row. When the provider says its token limit cut
// the reply off (finish reason "length"), the cut may fall between two
// calls: [Parser.ParseCut], or [Stream.Cut] before Finish, counts the reply
// cut off wherever it ended (a model turn does so). None of its calls runs: each attempt carries
// a ptk.DuplicateToolCall error that tells the model what it did. Agent
// runtimes treat such a reply as the model's failure, not as calls to run
// (Gemini CLI's loop detection stops on repeated identical calls), and
// running forty copies of a call that changes something is never what a
// user asked for. The numbers come from the BFCL dev corpus
// (docs/bfcl-replay.md): of its 25,175 replies, no reply read right had a
// call cut off after 3 or more complete calls, or 3 identical calls in a
// row; the rule reads 49 more replies right (all irrelevance questions,
// where the loop's calls were wrong) and none fewer. A reply with fewer
// calls before the cut keeps them: the cut call alone is not run
// ([DiagTruncated]). The verdict is made at the end of the reply, by
// [Parser.Parse] and [Stream.Finish] alike; a stream reports a call as it
// ends, but holds back the end of a call that repeats the call just before
// it (and of a call cut off after such a repeat) until a different call
// ends or the reply does, so a gateway never sends a repeat the verdict
// then takes back. What it has reported (the first of a run of identical
// calls, or a loop's different calls) is not taken back from whoever got
// it; an agent runs a reply's calls only at its end, and so runs none.
//
// With tools declared, each call is checked against its tool: the name
// (with a "did you mean" when it is unknown), then the arguments, coerced to
// the types the schema asks for ("5" → 5, "true" → true, a list in a string
// → an array, an array or object where a string is asked → its JSON text)
// and validated. Every repair and coercion is recorded on the
// call and as a [Diagnostic]; an invalid call becomes an [Attempt] with a
// [ptk.Error] written for the model to correct it.
//
// # Streaming
//
// [Parser.NewStream] reads a reply chunk by chunk and reports [Event]s as it
// goes: text, call start, the call's raw text, call end. Every decision
// depends only on the bytes read, never on where a chunk ended: when a
// decision needs bytes that have not arrived, the stream waits for them. So
// [Stream.Finish] returns exactly what [Parser.Parse] returns for the whole
// text, and the concatenated text events are exactly [Parsed.Text]. Each byte
// is looked at a bounded number of times: whole or streamed, parsing takes
// time linear in the length of the reply. Small writes (token-sized deltas)
// are taken in and read together, up to 1 KiB at a time, so their events
// can lag that much; [Stream.Flush] reads what is waiting, for a caller that
// shows the text to a person as it comes. A streamed call whose arguments
// are most of the reply (a file's content) has them as a slice of the
// stream's buffer rather than a copy: treat a call's Args as read-only.
//
// # Layers
//
// The Parser is a façade over three layers, each a package of its own:
// github.com/ptkit/ptk/lenient reads JSON (and Python and Gemma values) as
// models write it; github.com/ptkit/ptk/schema normalises, compiles, coerces,
// checks and renders a tool's JSON Schema, one tree for the checker and the
// prompt; github.com/ptkit/ptk/dialect scans a reply for calls in every
// dialect, listed in its tables. This package adds the PTK formatter and
// what a call means for the declared tools.
package protocol
