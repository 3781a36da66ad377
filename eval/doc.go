// Package eval measures how well a model calls tools, on the Berkeley
// Function Calling Leaderboard (BFCL) single-turn data: each question is
// asked once, with its functions as tools, in ptk's text protocol (with the
// PTK prompt or another one, such as Hermes-style <tool_call>), through the
// provider's native function calling, or in auto mode, and the calls the
// model makes are scored by a port of BFCL's AST checker.
//
// [Load] reads BFCL's files (questions and possible answers, JSON Lines),
// [Check] is the checker, [Run] asks a model every question and scores it,
// [Summarize] turns the results into a report per category and mode,
// [File] is what a run writes, and [Compare] shows two runs' differences
// question by question. [Replay] scores replies a model wrote before
// (recorded with the verdict their run gave, as in the BFCL replay corpus)
// exactly as a run scores the reply it gets, and [SummarizeReplay] sets
// ptk's verdicts beside the recorded ones, per model and per category.
//
// # The checker
//
// [Check] follows BFCL's ast_checker (bfcl_eval/eval_checker/ast_eval in
// ShishirPatil/gorilla, Apache-2.0): the category says how calls are
// matched (a category named parallel: every expected call matched by one of
// the model's in any order; multiple: exactly one call, the expected
// function; else exactly one call); a call must name the expected function,
// give every required parameter, give no parameter the function does not
// declare or the answer does not list, give each a value of the declared
// type (Python's exact type test, with an int accepted for a float, and the
// answer's own type accepted when it differs from the declared one: a
// variable name), and a value among the possible answers: strings compared
// after BFCL's normalisation (spaces and ,./-_*^ removed, lower case, ' read
// as "), lists compared whole and in order, dicts key by key one level deep;
// a parameter the model leaves out must be one the answer may omit ("").
// Java and JavaScript values are strings holding literals, decoded as BFCL
// decodes them ("5L", "3.0f", "new ArrayList<>(Arrays.asList(...))",
// "[1, 2]", "{'k': 'v'}"), and kept as strings when they do not parse.
// Irrelevance questions are right when no call is made; live_relevance ones
// when at least one is.
//
// # Two verdicts
//
// Each answer gets two verdicts. The strict one is BFCL's: the calls as the
// model wrote them, read without any schema coercion or name correction. The
// ptk one scores the calls as ptk reads them for a program: names
// corrected, values coerced to the schema's types ("5" read as 5), Java and
// JavaScript values the same. Where they differ, ptk's reading made the
// difference.
package eval
