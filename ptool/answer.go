package ptool

import (
	"encoding/json"
	"errors"
	"strings"
)

// AnswerReader reads a final answer a model wrote as text as a JSON value
// of an output schema, the way a ptool reads its output: between <answer>
// tags, from a code fence or bare, leniently, coerced to the schema and
// checked. An agent run whose answer must be such a value (ptk run
// --output-schema) gives the model Instructions and reads its answer with
// Read. It does not change after NewAnswerReader.
type AnswerReader struct {
	spec *Spec
}

// NewAnswerReader compiles an output schema: a JSON Schema object.
func NewAnswerReader(outputSchema []byte) (*AnswerReader, error) {
	s, err := newSpec("answer", "The final answer.", json.RawMessage(`{"type":"object"}`), json.RawMessage(outputSchema), nil, "")
	if err != nil {
		return nil, err
	}
	return &AnswerReader{spec: s}, nil
}

// Instructions says how the final answer is to be written: its type and
// fields, as a ptool's prompt says them, between <answer> tags.
func (a *AnswerReader) Instructions() string {
	s := a.spec
	var b strings.Builder
	b.WriteString("When you give your final answer (after any tool calls), write it as JSON between <answer> and </answer>: ")
	b.WriteString(s.outputType)
	b.WriteString(".")
	if s.outputFields != "" {
		b.WriteString(" Its fields:\n" + s.outputFields)
	}
	b.WriteString("\nIf you cannot answer, write <cannot_answer>why</cannot_answer> instead. Never invent an answer.")
	return b.String()
}

// Read reads the answer in text: the value as compact JSON, or an error
// that says what is wrong with it, in words a model can act on; a model
// that wrote it cannot answer is an *AbstainedError (ErrAbstained).
func (a *AnswerReader) Read(text string) (json.RawMessage, error) {
	ans := a.spec.readText(text)
	switch {
	case ans.abstained:
		return nil, &AbstainedError{PTool: "answer", Reason: ans.reason}
	case len(ans.problems) > 0:
		return nil, errors.New(strings.Join(ans.problems, "; "))
	}
	return ans.json, nil
}
