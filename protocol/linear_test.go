package protocol

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// adversarial inputs: each is a unit repeated; a parser that backtracks or
// rescans would take quadratic time on some of them.
var adversarial = map[string]string{
	// the shapes of issue 14's last stop
	"kimi-k3 opens":        `<|open|>tools<|sep|><|open|>call tool="bash"<|sep|><|open|>argument key="command"<|sep|>`,
	"openers in reasoning": "<think><tool_call>[TOOL_CALLS]<function=",
	"minimax-m3 markers":   "]<]minimax[>[",
	"tool tags":            "<read_file><path>a",
	"pythonic lists":       "[get_weather(city='x')] and ",
	"cdata":                `<function name="bash"><param name="command"><![CDATA[`,
	"harmony recipients":   "commentary to=functions.bash json{",
	"gigachat headers":     "<|message_sep|>function call<|role_sep|>{",
	"glm keys glued":       "<tool_call>bashcommand</arg_key><arg_value>",
	"unquoted values":      `<tool_call>{"name": "bash", "arguments": {"command": ls -la `,
	"open braces":          "{",
	"open brackets":        "[",
	"angle brackets":       "<",
	"quote soup":           `{"a": "x" "`,
	"openers":              "<tool_call>",
	"unclosed json":        `<tool_call>{"name": "x", "arguments": {"a": "`,
	"nested calls":         `{"name": "read_file", "arguments": {`,
	"backticks":            "`",
	"fences":               "```json\n{",
	"think openers":        "<think>",
	"harmony headers":      "<|start|>assistant",
	"mistral markers":      "[TOOL_CALLS]",
	"arrows":               ">>>",
	"tool names":           "get_weather(",
	"python calls":         "[get_weather(city='",
	"spaces after quote":   `<tool_call>{"a": "x"` + strings.Repeat(" ", 300),
	"word":                 "a",
	"xml params":           "<tool_call><function=x><parameter=a>",
	"glm keys":             "x<arg_key>",
	"deepseek tokens":      "<｜tool▁calls▁begin｜>",
	"unicode spaces":       "\u00a0\u3000x",
	"xml param walls":      "<tool_call><function=x><parameter>k<parameter=v>",
	"xml function walls":   "<tool_call><function>",
	"glm value walls":      "<tool_call>x<arg_key>k</arg_key><arg_value>",
	"quoted lines":         "> {\"name\": \"x\", ",
	"kimi json":            "<|tool_call_begin|>functions.x:0<|tool_call_argument_begin|>{\"a\": \"",
	"python in wrapper":    "<|python_start|>[f(a='",
	"dsml":                 "<｜DSML｜invoke name=\"x\"><｜DSML｜parameter name=\"a\" string=\"true\">",
	"stray closers":        "</tool_call>",
	"think blocks":         "<think>a</think>",
	"tildes":               "~~~\n~",
	"think code":           "<think>`a\n`",
	"markdown nesting":     "```markdown\n```bash\n",
	"tag junk":             "<tool_call>{\"name\": \"x\", \"arguments\": {}} j",
	"backslashes":          `<tool_call>{"name": "x", "arguments": {"p": "C:\Users\`,
	"sentences":            "I called {\"name\": \"x\", \"arguments\": {}} then ",
	// the shapes of issue 30 (BFCL replay)
	"quoted calls":       "['get_weather(city='x')', ",
	"quoted call lines":  "\n'get_weather(city='x')' and",
	"bare call runs":     "get_weather(city='x'); get_weather(city=\"x\"), ",
	"quoted openers":     "['",
	"expressions":        "[get_weather(city='x') + now()[0] * ",
	"headers first":      "<|start_header_id|>assistant<|end_header_id|>\n",
	"headers":            "x\n<|im_start|>user\n",
	"lone header tokens": "<|im_start|><|start_header_id|>",
	"named lists":        "[('get_weather', {'city': 'x'}), ",
	"named keywords":     "['get_weather', city=",
	"tuples":             "\n(get_weather(city='x'), ",
	"line parens":        "\n(",
	"subscripts":         "[get_weather(city=x[0][",
	"quoted names":       "['get_weather'(city='x'), ",
	"comma lines":        "get_weather(city='x'),\n",
	// repetition loops: each call compared with the one before it, the
	// same text or the same JSON spaced otherwise
	"repeated calls":  "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}</tool_call>\n",
	"malformed calls": "<tool_call>{\"name\": \"read_file\", \"arguments\": [}</tool_call>\n",
	"respaced calls":  "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}</tool_call>\n<tool_call>{\"name\": \"read_file\", \"arguments\": { \"path\" : \"a\" }}</tool_call>\n",
}

// withEvents are the units also streamed to a reader of the events, as a
// model turn reads them: a call's end is held back when it repeats the
// call before it (a repetition loop), which must not cost more per call.
var withEvents = map[string]bool{"repeated calls": true, "respaced calls": true, "malformed calls": true}

// cost returns the shortest of three timings of f.
func cost(f func()) time.Duration {
	best := time.Duration(1 << 62)
	for range 3 {
		start := time.Now()
		f()
		best = min(best, time.Since(start))
	}
	return best
}

// linearModes are what TestLinearTime times: a whole parse and a stream
// fed byte by byte, and, without the race detector (which slows it to
// minutes; CI runs it on its own), making the text inert (Parser.Neutralize,
// about three parses).
var linearModes = []string{"whole", "stream"}

func init() {
	if !raceEnabled {
		linearModes = append(linearModes, "neutralize")
	}
}

// TestLinearTime checks that 4× the input takes about 4× the time, whole
// and streamed byte by byte: a quadratic parser would take 16×.
func TestLinearTime(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	p, err := NewParser(testTools)
	if err != nil {
		t.Fatal(err)
	}
	const small = 32 << 10
	for name, unit := range adversarial {
		t.Run(name, func(t *testing.T) {
			in1 := strings.Repeat(unit, small/len(unit)+1)
			in4 := strings.Repeat(unit, 4*small/len(unit)+1)
			modes := linearModes
			if withEvents[name] {
				modes = append(slices.Clip(modes), "stream with events")
			}
			for _, mode := range modes {
				run := func(in string) func() {
					switch mode {
					case "whole":
						return func() { p.Parse(in) }
					case "neutralize":
						return func() { p.Neutralize(in) }
					case "stream with events":
						return func() {
							s := p.NewStream(func(Event) {})
							for i := 0; i < len(in); i += 16 {
								s.WriteString(in[i:min(i+16, len(in))])
							}
							s.Finish()
						}
					}
					return func() {
						s := p.NewStream(nil)
						for i := 0; i < len(in); i++ {
							s.WriteString(in[i : i+1])
						}
						s.Finish()
					}
				}
				// On a shared machine a measurement can land on a burst of
				// someone else's work: a case fails only when 4× the input
				// takes over 9× the time in each of several measurements (a
				// quadratic parser takes 16× every time).
				// Under the race detector every access is slowed tenfold and
				// its shadow memory makes timings jump (a linear case measured
				// 2 ms -> 29 ms -> 52 ms at 32, 128, 512 KiB): the floor below
				// which a time counts as noise is ten times higher.
				floor := 20 * time.Millisecond
				if raceEnabled {
					floor *= 10
				}
				var c1, c4 time.Duration
				var ratio float64
				for range 5 {
					c1, c4 = cost(run(in1)), cost(run(in4))
					ratio = float64(c4) / float64(c1)
					t.Logf("%s: %v -> %v (×%.1f)", mode, c1, c4, ratio)
					if ratio <= 9 || c4 <= floor {
						break
					}
				}
				if ratio > 9 && c4 > floor {
					t.Errorf("%s: 4× the input took %.1f× the time (%v -> %v) in each of 5 measurements: not linear", mode, ratio, c1, c4)
				}
			}
		})
	}
}
