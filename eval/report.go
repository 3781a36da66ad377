package eval

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ptkit/ptk/internal/outfile"
)

// Summary is the report of one category (or "all") in one mode and prompt.
type Summary struct {
	Category string `json:"category"`
	Mode     Mode   `json:"mode"`
	Prompt   string `json:"prompt,omitempty"`
	// Questions counts the questions answered (Errors those the provider
	// failed to answer, not scored).
	Questions int `json:"questions"`
	Errors    int `json:"errors"`
	// Correct and Accuracy are ptk's verdict; StrictCorrect and
	// StrictAccuracy BFCL's.
	Correct        int     `json:"correct"`
	Accuracy       float64 `json:"accuracy"`
	StrictCorrect  int     `json:"strict_correct"`
	StrictAccuracy float64 `json:"strict_accuracy"`
	// NotParsed counts answers with a call that could not be read, Invalid
	// those with a call that broke its schema (InvalidRules: how many broke
	// each rule), Refusals prose answers to questions that needed a call.
	NotParsed    int            `json:"not_parsed"`
	Invalid      int            `json:"invalid"`
	InvalidRules map[string]int `json:"invalid_rules,omitempty"`
	Refusals     int            `json:"refusals"`
	// Latency of the answers, in milliseconds.
	LatencyP50MS int64 `json:"latency_p50_ms"`
	LatencyP95MS int64 `json:"latency_p95_ms"`
	// Tokens and cost (US dollars) of all the answers.
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	Cost             float64 `json:"cost"`
}

type summaryKey struct {
	cat    string
	mode   Mode
	prompt string
}

// Summarize reports results per category, mode and prompt, categories in
// the order of Categories, then a row "all" per mode and prompt: every
// answer counted once (not BFCL's weighted overall score).
func Summarize(results []Result) []Summary {
	groups := map[summaryKey][]Result{}
	for _, r := range results {
		groups[summaryKey{r.Category, r.Mode, r.Prompt}] = append(groups[summaryKey{r.Category, r.Mode, r.Prompt}], r)
		groups[summaryKey{"all", r.Mode, r.Prompt}] = append(groups[summaryKey{"all", r.Mode, r.Prompt}], r)
	}
	keys := make([]summaryKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	order := func(c string) int {
		if i := slices.Index(Categories, c); i >= 0 {
			return i
		}
		if c == "all" {
			return len(Categories) + 1
		}
		return len(Categories)
	}
	slices.SortFunc(keys, func(a, b summaryKey) int {
		return cmp.Or(cmp.Compare(order(a.cat), order(b.cat)), strings.Compare(a.cat, b.cat),
			cmp.Compare(modeOrder(a.mode), modeOrder(b.mode)), strings.Compare(a.prompt, b.prompt))
	})
	var out []Summary
	for _, k := range keys {
		out = append(out, summarize(k, groups[k]))
	}
	return out
}

func modeOrder(m Mode) int {
	switch m {
	case ModePTK:
		return 0
	case ModeNative:
		return 1
	}
	return 2
}

func summarize(k summaryKey, rs []Result) Summary {
	s := Summary{Category: k.cat, Mode: k.mode, Prompt: k.prompt}
	var lat []int64
	for _, r := range rs {
		if r.Error != "" {
			s.Errors++
			continue
		}
		s.Questions++
		if r.Correct {
			s.Correct++
		}
		if r.Strict.Correct {
			s.StrictCorrect++
		}
		if r.NotParsed > 0 {
			s.NotParsed++
		}
		if len(r.Invalid) > 0 {
			s.Invalid++
			if s.InvalidRules == nil {
				s.InvalidRules = map[string]int{}
			}
			for _, rule := range r.Invalid {
				s.InvalidRules[rule]++
			}
		}
		if r.Refusal {
			s.Refusals++
		}
		lat = append(lat, r.LatencyMS)
		s.PromptTokens += r.Usage.PromptTokens
		s.CompletionTokens += r.Usage.CompletionTokens
		s.Cost += r.Cost
	}
	if s.Questions > 0 {
		s.Accuracy = float64(s.Correct) / float64(s.Questions)
		s.StrictAccuracy = float64(s.StrictCorrect) / float64(s.Questions)
	}
	slices.Sort(lat)
	s.LatencyP50MS, s.LatencyP95MS = percentile(lat, 50), percentile(lat, 95)
	return s
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []int64, p int) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := (p*len(sorted)+99)/100 - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// Markdown writes the summaries as a Markdown table.
func Markdown(w io.Writer, sums []Summary) error {
	var b strings.Builder
	b.WriteString("| category | mode | questions | accuracy | strict (BFCL) | not parsed | invalid | refusals | errors | p50 | p95 | tokens in/out | cost |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, s := range sums {
		invalid := fmt.Sprint(s.Invalid)
		if len(s.InvalidRules) > 0 {
			var rules []string
			for r, n := range s.InvalidRules {
				rules = append(rules, fmt.Sprintf("%s %d", r, n))
			}
			sort.Strings(rules)
			invalid += " (" + strings.Join(rules, ", ") + ")"
		}
		cat := s.Category
		if cat == "all" {
			cat = "**all**"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.1f%% | %.1f%% | %d | %s | %d | %d | %s | %s | %d/%d | $%.4f |\n",
			cat, modeLabel(s.Mode, s.Prompt), s.Questions, 100*s.Accuracy, 100*s.StrictAccuracy,
			s.NotParsed, invalid, s.Refusals, s.Errors, ms(s.LatencyP50MS), ms(s.LatencyP95MS),
			s.PromptTokens, s.CompletionTokens, s.Cost)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func modeLabel(m Mode, prompt string) string {
	if prompt == "" || m == ModeNative {
		return string(m)
	}
	return string(m) + "/" + prompt
}

func ms(v int64) string {
	if v >= 10000 {
		return fmt.Sprintf("%.0fs", float64(v)/1000)
	}
	if v >= 1000 {
		return fmt.Sprintf("%.1fs", float64(v)/1000)
	}
	return fmt.Sprintf("%dms", v)
}

// File is what a run writes (ptk eval --out): what was asked of which
// model, every result and the summaries.
type File struct {
	Version int       `json:"version"`
	Model   string    `json:"model"`
	Started time.Time `json:"started"`
	Results []Result  `json:"results"`
	Summary []Summary `json:"summary"`
}

// ReadFile reads a File.
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &f, nil
}

// WriteFile writes f to path, replacing it at once (a temporary file
// renamed): an interrupted write never leaves half a file, and a symbolic
// link at path is replaced, not followed.
func WriteFile(path string, f *File) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return outfile.WriteFile(path, append(data, '\n'), 0o644)
}

// Change is a question whose verdict differs between two runs.
type Change struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	Mode     Mode   `json:"mode"`
	Prompt   string `json:"prompt,omitempty"`
	// A and B are the verdicts: "correct", or BFCL's error type.
	A string `json:"a"`
	B string `json:"b"`
}

// Comparison is what differs between two runs.
type Comparison struct {
	// Rows pair the summaries of each category, mode and prompt that both
	// runs have.
	Rows []ComparisonRow `json:"rows"`
	// Changes are the questions asked in both runs whose verdict differs,
	// in the order of a's results.
	Changes []Change `json:"changes"`
	// OnlyA and OnlyB count the results one run has and the other not.
	OnlyA int `json:"only_a"`
	OnlyB int `json:"only_b"`
}

// ComparisonRow is a category, mode and prompt in both runs.
type ComparisonRow struct {
	A, B Summary
}

func verdictName(r Result) string {
	switch {
	case r.Error != "":
		return "error"
	case r.Correct:
		return "correct"
	}
	return r.Verdict.ErrorType
}

// Compare compares two runs question by question, over the questions both
// asked in the same mode and prompt.
func Compare(a, b *File) Comparison {
	var c Comparison
	inB := map[string]Result{}
	for _, r := range b.Results {
		inB[r.Key()] = r
	}
	var both []Result
	var bothB []Result
	seen := map[string]bool{}
	for _, ra := range a.Results {
		rb, ok := inB[ra.Key()]
		if !ok {
			c.OnlyA++
			continue
		}
		seen[ra.Key()] = true
		both, bothB = append(both, ra), append(bothB, rb)
		if va, vb := verdictName(ra), verdictName(rb); va != vb {
			c.Changes = append(c.Changes, Change{ID: ra.ID, Category: ra.Category, Mode: ra.Mode, Prompt: ra.Prompt, A: va, B: vb})
		}
	}
	c.OnlyB = len(b.Results) - len(seen)
	sa, sb := Summarize(both), Summarize(bothB)
	for i := range sa {
		c.Rows = append(c.Rows, ComparisonRow{A: sa[i], B: sb[i]})
	}
	return c
}

// CompareMarkdown writes a comparison: accuracy per category, mode and
// prompt in both runs, then each question whose verdict changed.
func CompareMarkdown(w io.Writer, c Comparison) error {
	var b strings.Builder
	b.WriteString("| category | mode | questions | accuracy A | accuracy B | Δ | strict A | strict B |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range c.Rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %.1f%% | %.1f%% | %+.1f | %.1f%% | %.1f%% |\n",
			r.A.Category, modeLabel(r.A.Mode, r.A.Prompt), r.A.Questions, 100*r.A.Accuracy, 100*r.B.Accuracy,
			100*(r.B.Accuracy-r.A.Accuracy), 100*r.A.StrictAccuracy, 100*r.B.StrictAccuracy)
	}
	if len(c.Changes) == 0 {
		b.WriteString("\nNo question changed verdict.\n")
	} else {
		fmt.Fprintf(&b, "\n%d questions changed verdict:\n\n", len(c.Changes))
		for _, ch := range c.Changes {
			fmt.Fprintf(&b, "- %s (%s): %s → %s\n", ch.ID, modeLabel(ch.Mode, ch.Prompt), ch.A, ch.B)
		}
	}
	if c.OnlyA > 0 || c.OnlyB > 0 {
		fmt.Fprintf(&b, "\nAsked in one run only: %d in A, %d in B.\n", c.OnlyA, c.OnlyB)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
