// Package protocol is ptk's text protocol: the Formatter that writes what a
// model reads (system prompt, tool definitions, a flattened conversation, tool
// results) and the Parser that reads what a model writes (calls in PTK tags and
// in the other formats models drift into, repaired, validated and coerced
// against each tool's JSON Schema), whole or streamed.
package protocol
