package gateway_test

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/ptkit/ptk/agent"
)

// corpusCase is one line of the parser's corpus of real model replies,
// ../../shared/corpus/parse/cases.jsonl (its README says what each field
// means).
type corpusCase struct {
	ID      string `json:"id"`
	Raw     string `json:"raw"`
	Dialect string `json:"dialect"`
	Expect  struct {
		Calls []struct {
			Tool string          `json:"tool"`
			Args json.RawMessage `json:"args"`
		} `json:"calls"`
		Text *string `json:"text"`
	} `json:"expect"`
}

func loadCorpus(t *testing.T) map[string]corpusCase {
	t.Helper()
	f, err := os.Open("../../shared/corpus/parse/cases.jsonl")
	if os.IsNotExist(err) {
		t.Skipf("corpus not found: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases := map[string]corpusCase{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var c corpusCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("corpus line %d: %v", len(cases)+1, err)
		}
		cases[c.ID] = c
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// dialectCases are the replies of the corpus the gateway is asked to read,
// one or more per dialect. The tools declared are those the expected calls
// name, without schemas (the arguments are then not checked), except
// where a case says otherwise.
var dialectCases = []struct {
	id string
	// tools, when set, are the tools declared instead.
	tools []string
	// schemas are the schemas of some tools, where the expected reading
	// depends on them.
	schemas map[string]string
}{
	{id: "derived-ptk-07"},                                 // PTK in a json fence, after prose
	{id: "derived-ptk-08"},                                 // two PTK calls, then prose
	{id: "derived-ptk-10", tools: []string{"delete_file"}}, // a call inside <think> is not made
	{id: "llamacpp-hermes-02"},                             // Hermes <tool_call> after prose
	{id: "ollama-tools-03"},                                // two Hermes calls
	{id: "sglang-hermes-01"},                               // two calls in one <tool_call>
	{id: "minpeter-live-05", schemas: map[string]string{ // unclosed <tool_call>, a hallucinated argument
		"write_file": `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`,
	}},
	{id: "issue-kronk-950"},          // fenced JSON
	{id: "llamacpp-hermes-fence-02"}, // JSON in an xml fence
	{id: "vllm-llama3-01"},           // bare JSON in prose
	{id: "sglang-pythonic-01"},       // pythonic, after prose
	{id: "vllm-pythonic-02"},         // pythonic with nested values
	{id: "ollama-ministral-02"},      // two [TOOL_CALLS]
	{id: "vllm-mistral-03"},          // [TOOL_CALLS] with a JSON array
	{id: "issue-mistralvibe-594"},    // [TOOL_CALLS]name[ARGS]
	{id: "minpeter-live-04"},         // Qwen3 XML, Korean and an emoji
	{id: "issue-omlx-844"},           // Qwen3-Coder XML
	{id: "sglang-kimi-01"},           // Kimi tokens
	{id: "llamacpp-deepseek-01"},     // <think>, then DeepSeek's tokens
	{id: "llamacpp-harmony-01"},      // Harmony channels
	{id: "ollama-gemma4-01"},         // Gemma's call syntax
	{id: "issue-glm5-84"},            // GLM's arg_key/arg_value
}

// wantReasoning is what reasoning_content holds for the cases that think.
var wantReasoning = map[string]string{
	"derived-ptk-10":       "but that is destructive.",
	"llamacpp-deepseek-01": "I'm\nthinking",
	"llamacpp-harmony-01":  "I'm\nthinking",
}

// reasoning is the answer's reasoning_content, a field the SDK does not
// read: the message's, or the deltas' run together.
func reasoning(a answer) string {
	var v struct {
		Choices []struct {
			Message, Delta struct {
				ReasoningContent string `json:"reasoning_content"`
			}
		}
	}
	if a.chunks == nil {
		json.Unmarshal([]byte(a.RawJSON()), &v)
		return v.Choices[0].Message.ReasoningContent
	}
	var b strings.Builder
	for _, ch := range a.chunks {
		v.Choices = nil
		json.Unmarshal([]byte(ch.RawJSON()), &v)
		if len(v.Choices) > 0 {
			b.WriteString(v.Choices[0].Delta.ReasoningContent)
		}
	}
	return b.String()
}

// TestSDKDialects sends real replies in the formats models drift into,
// whole and streamed one byte (one rune) per delta: the SDK must see the
// calls the corpus expects, the same both ways, and text deltas free of
// protocol tags and reasoning.
func TestSDKDialects(t *testing.T) {
	t.Parallel()
	corpus := loadCorpus(t)
	for _, dc := range dialectCases {
		c, ok := corpus[dc.id]
		if !ok {
			t.Errorf("%s: not in the corpus", dc.id)
			continue
		}
		t.Run(dc.id, func(t *testing.T) {
			t.Parallel()
			var tools []openai.ChatCompletionToolUnionParam
			declare := func(name string) {
				var params obj
				if s := dc.schemas[name]; s != "" {
					if err := json.Unmarshal([]byte(s), &params); err != nil {
						t.Fatal(err)
					}
				}
				for _, tl := range tools {
					if tl.OfFunction.Function.Name == name {
						return
					}
				}
				tools = append(tools, function(name, "A tool of case "+dc.id+".", params))
			}
			for _, name := range dc.tools {
				declare(name)
			}
			if dc.tools == nil {
				for _, call := range c.Expect.Calls {
					declare(call.Tool)
				}
			}
			var want []call
			for _, wc := range c.Expect.Calls {
				want = append(want, call{wc.Tool, canonical(t, string(wc.Args))})
			}
			var answers []answer
			for _, w := range bothWays {
				up := startUpstream(t, &upstream{chunk: w.chunk, script: []reply{say(c.Raw)}})
				g := newGateway(t, up, agent.ModePTK)
				a := mustAsk(t, g.client, chat("Go on.", tools...), w.stream)
				if got := a.calls(t); !slices.Equal(got, want) {
					t.Errorf("%s: calls %v, want %v\nraw: %q", w.name, got, want, c.Raw)
				}
				if c.Expect.Text != nil && a.content() != *c.Expect.Text {
					t.Errorf("%s: content %q, want %q", w.name, a.content(), *c.Expect.Text)
				}
				for _, tag := range protocolTags {
					if strings.Contains(a.content(), tag) {
						t.Errorf("%s: content %q holds %q", w.name, a.content(), tag)
					}
				}
				if want := wantReasoning[dc.id]; want != "" && !strings.Contains(reasoning(a), want) {
					t.Errorf("%s: reasoning_content %q, want it to hold %q", w.name, reasoning(a), want)
				}
				if n := len(up.requests()); n != 1 {
					t.Errorf("%s: the upstream got %d requests, want 1", w.name, n)
				}
				answers = append(answers, a)
			}
			if whole, streamed := answers[0], answers[1]; whole.content() != streamed.content() {
				t.Errorf("content whole %q, streamed %q", whole.content(), streamed.content())
			}
		})
	}
}
