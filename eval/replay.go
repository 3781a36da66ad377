package eval

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ptkit/ptk"
	"github.com/ptkit/ptk/llm"
	"github.com/ptkit/ptk/protocol"
	"github.com/ptkit/ptk/turn"
)

// Recorded is a reply a model wrote to a BFCL question in some earlier run,
// with the verdict that run gave it: one line of a replay file (JSON Lines;
// the fields of ../shared/corpus/bfcl-replay/dev.jsonl).
type Recorded struct {
	// Model and Family name who wrote it (Family may be empty).
	Model  string `json:"model"`
	Family string `json:"family,omitempty"`
	// Category is the question's category; empty takes the question's.
	Category string `json:"category,omitempty"`
	// ID is the question's BFCL v4 id.
	ID string `json:"id"`
	// Raw is the reply exactly as the model wrote it.
	Raw string `json:"raw"`
	// Correct is the recorded verdict (BFCL's, by the model's own handler,
	// in the dev corpus); nil when the run recorded none.
	Correct *bool `json:"bfcl_correct,omitempty"`
	// Underscore: the model was shown the function names with '.' written
	// '_' (BFCL does so for some models), so the tools are declared so.
	Underscore bool `json:"underscore,omitempty"`
}

// ReadRecorded reads a replay file: one Recorded per line, blank lines
// skipped. A line that is not one, or lacks its model, id or raw field, is
// an error that names the line.
func ReadRecorded(r io.Reader) ([]Recorded, error) {
	var out []Recorded
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var rec struct {
			Recorded
			Raw *string `json:"raw"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		switch {
		case rec.Model == "":
			return nil, fmt.Errorf("line %d: no \"model\"", n)
		case rec.ID == "":
			return nil, fmt.Errorf("line %d: no \"id\"", n)
		case rec.Raw == nil:
			return nil, fmt.Errorf("line %d: no \"raw\" (the reply as the model wrote it)", n)
		}
		rec.Recorded.Raw = *rec.Raw
		out = append(out, rec.Recorded)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Replayed is a recorded reply scored again, as a live run scores the
// reply it gets.
type Replayed struct {
	Model  string `json:"model"`
	Family string `json:"family,omitempty"`
	// Recorded is the verdict the recorded run gave, if it gave one.
	Recorded *bool `json:"recorded,omitempty"`
	// Result is ptk's reading and verdicts, as [Run] makes them (mode ptk,
	// prompt "replay").
	Result
}

// Differs reports a reply whose ptk verdict is not the recorded one.
func (r *Replayed) Differs() bool { return r.Recorded != nil && *r.Recorded != r.Correct }

// ErrUnknownQuestion is Replay's error for a recorded reply to a question
// the loaded data does not have.
var ErrUnknownQuestion = errors.New("eval: the recorded reply's question is not in the data")

// Replay scores recorded replies as a live run scores a reply in the text
// protocol: the question's functions are declared as tools, the reply is
// read by ptk's parser through the same model turn and scored by the
// checker. Replies are scored concurrently; the results are in the order of
// recs. A reply to a question not among questions, or of another category
// than the question's, is an error (wrapping [ErrUnknownQuestion]).
func Replay(ctx context.Context, questions []*Question, recs []Recorded) ([]Replayed, error) {
	byID := make(map[string]*Question, len(questions))
	for _, q := range questions {
		byID[q.ID] = q
	}
	for i, rec := range recs {
		q, ok := byID[rec.ID]
		if !ok {
			return nil, fmt.Errorf("%w: reply %d (%s) answers %q", ErrUnknownQuestion, i+1, rec.Model, rec.ID)
		}
		if rec.Category != "" && rec.Category != q.Category {
			return nil, fmt.Errorf("%w: reply %d (%s) answers %q as %s, but the data has it in %s", ErrUnknownQuestion, i+1, rec.Model, rec.ID, rec.Category, q.Category)
		}
	}
	// One parser per question and naming: a Parser is immutable, and the
	// models replayed answer the same questions.
	type key struct {
		id         string
		underscore bool
	}
	type reader struct {
		once   sync.Once
		tools  []ptk.ToolInfo
		names  map[string]string
		parser *protocol.Parser
		err    error
	}
	var mu sync.Mutex
	readers := map[key]*reader{}
	readerOf := func(q *Question, underscore bool) *reader {
		mu.Lock()
		rd, ok := readers[key{q.ID, underscore}]
		if !ok {
			rd = &reader{}
			readers[key{q.ID, underscore}] = rd
		}
		mu.Unlock()
		rd.once.Do(func() {
			rd.tools, rd.names = toolsOf(q, underscore)
			rd.parser, rd.err = protocol.NewParser(rd.tools)
		})
		return rd
	}
	out := make([]Replayed, len(recs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				rec := &recs[i]
				q := byID[rec.ID]
				rd := readerOf(q, rec.Underscore)
				out[i] = Replayed{Model: rec.Model, Family: rec.Family, Recorded: rec.Correct}
				out[i].Result = replayOne(ctx, q, rec.Raw, rd.tools, rd.names, rd.parser, rd.err)
			}
		})
	}
feed:
	for i := range recs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// replayOne reads and scores one recorded reply.
func replayOne(ctx context.Context, q *Question, raw string, tools []ptk.ToolInfo, names map[string]string, parser *protocol.Parser, perr error) Result {
	r := Result{ID: q.ID, Category: q.Category, Mode: ModePTK, Prompt: "replay", Used: ModePTK, Calls: []CallRecord{}, Text: raw}
	if perr != nil {
		r.Error = "the question's tools cannot be used: " + perr.Error()
		return r
	}
	t := turn.Turn{Model: answer(raw), Parser: parser, Mode: turn.PTK}
	rep, err := t.Ask(ctx, llm.Request{}, nil)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	score(&r, q, rep, parser, tools, names, false)
	return r
}

// answer is a model that answers every request with one recorded text.
type answer string

var _ llm.Model = answer("")

func (a answer) Generate(context.Context, llm.Request) (*llm.Response, error) {
	return &llm.Response{Content: string(a)}, nil
}

// ReplayRow counts one model's, one category's, or one model's in one
// category's replayed replies.
type ReplayRow struct {
	// Model and Category say what the row counts; "" is every one.
	Model    string `json:"model,omitempty"`
	Family   string `json:"family,omitempty"`
	Category string `json:"category,omitempty"`
	// Outputs counts the replies scored, Correct those ptk reads right.
	Outputs int `json:"outputs"`
	Correct int `json:"correct"`
	// Recorded counts the replies with a recorded verdict, RecordedCorrect
	// those it says are right.
	Recorded        int `json:"recorded"`
	RecordedCorrect int `json:"recorded_correct"`
	// Gained counts replies ptk reads right and the recorded verdict says
	// are wrong; Lost the other way round.
	Gained int `json:"gained"`
	Lost   int `json:"lost"`
	// Errors counts replies that could not be scored (not in Outputs).
	Errors int `json:"errors,omitempty"`
}

// Accuracy is ptk's share of replies read right (0 with none).
func (r ReplayRow) Accuracy() float64 { return ratio(r.Correct, r.Outputs) }

// RecordedAccuracy is the recorded verdict's share of replies right.
func (r ReplayRow) RecordedAccuracy() float64 { return ratio(r.RecordedCorrect, r.Recorded) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func (r *ReplayRow) add(x *Replayed) {
	if x.Error != "" {
		r.Errors++
		return
	}
	r.Outputs++
	if x.Correct {
		r.Correct++
	}
	if x.Recorded == nil {
		return
	}
	r.Recorded++
	if *x.Recorded {
		r.RecordedCorrect++
	}
	switch {
	case x.Correct && !*x.Recorded:
		r.Gained++
	case !x.Correct && *x.Recorded:
		r.Lost++
	}
}

// ReplayReport sums up a replay: all replies, each model, each category,
// and each model in each category.
type ReplayReport struct {
	All ReplayRow `json:"all"`
	// Models in the order of their names; Categories in the order of
	// Categories (others after, by name); Cells by model, then category.
	Models     []ReplayRow `json:"models"`
	Categories []ReplayRow `json:"categories"`
	Cells      []ReplayRow `json:"cells"`
}

// SummarizeReplay counts replayed replies per model and category.
func SummarizeReplay(rs []Replayed) ReplayReport {
	var rep ReplayReport
	models, cats, cells := map[string]*ReplayRow{}, map[string]*ReplayRow{}, map[[2]string]*ReplayRow{}
	get := func(m map[string]*ReplayRow, k string, mk func() *ReplayRow) *ReplayRow {
		if r, ok := m[k]; ok {
			return r
		}
		r := mk()
		m[k] = r
		return r
	}
	for i := range rs {
		x := &rs[i]
		rep.All.add(x)
		get(models, x.Model, func() *ReplayRow { return &ReplayRow{Model: x.Model, Family: x.Family} }).add(x)
		get(cats, x.Category, func() *ReplayRow { return &ReplayRow{Category: x.Category} }).add(x)
		k := [2]string{x.Model, x.Category}
		c, ok := cells[k]
		if !ok {
			c = &ReplayRow{Model: x.Model, Family: x.Family, Category: x.Category}
			cells[k] = c
		}
		c.add(x)
	}
	for _, r := range models {
		rep.Models = append(rep.Models, *r)
	}
	for _, r := range cats {
		rep.Categories = append(rep.Categories, *r)
	}
	for _, r := range cells {
		rep.Cells = append(rep.Cells, *r)
	}
	byCat := func(a, b string) int {
		ia, ib := slices.Index(Categories, a), slices.Index(Categories, b)
		if ia < 0 {
			ia = len(Categories)
		}
		if ib < 0 {
			ib = len(Categories)
		}
		return cmp.Or(cmp.Compare(ia, ib), strings.Compare(a, b))
	}
	slices.SortFunc(rep.Models, func(a, b ReplayRow) int { return strings.Compare(a.Model, b.Model) })
	slices.SortFunc(rep.Categories, func(a, b ReplayRow) int { return byCat(a.Category, b.Category) })
	slices.SortFunc(rep.Cells, func(a, b ReplayRow) int {
		return cmp.Or(strings.Compare(a.Model, b.Model), byCat(a.Category, b.Category))
	})
	return rep
}

// ReplayMarkdown writes a replay's report as Markdown tables: all replies,
// each model, each category, then ptk's accuracy per model and category
// with the recorded verdict's beside it.
func ReplayMarkdown(w io.Writer, rep ReplayReport) error {
	var b strings.Builder
	recorded := rep.All.Recorded > 0
	head := func(first string) {
		b.WriteString("| " + first + " | outputs | ptk |")
		if recorded {
			b.WriteString(" recorded | Δ | ptk right, recorded wrong | recorded right, ptk wrong |")
		}
		b.WriteString("\n|" + strings.Repeat(" --- |", strings.Count(first, "|")+1) + " ---: | ---: |")
		if recorded {
			b.WriteString(" ---: | ---: | ---: | ---: |")
		}
		b.WriteString("\n")
	}
	row := func(first string, r ReplayRow) {
		fmt.Fprintf(&b, "| %s | %d | %s |", first, r.Outputs, pct(r.Accuracy()))
		if recorded {
			fmt.Fprintf(&b, " %s | %+.1f | %d | %d |", pct(r.RecordedAccuracy()), 100*(r.Accuracy()-r.RecordedAccuracy()), r.Gained, r.Lost)
		}
		b.WriteString("\n")
	}
	head("model | family")
	for _, r := range rep.Models {
		row(cell(r.Model)+" | "+cell(r.Family), r)
	}
	row("**all** |", rep.All)
	b.WriteString("\n")
	head("category")
	for _, r := range rep.Categories {
		row(cell(r.Category), r)
	}
	row("**all**", rep.All)
	b.WriteString("\n")
	// ptk (recorded) per model and category.
	b.WriteString("| model |")
	for _, c := range rep.Categories {
		b.WriteString(" " + cell(c.Category) + " |")
	}
	b.WriteString("\n| --- |" + strings.Repeat(" ---: |", len(rep.Categories)) + "\n")
	i := 0
	for _, m := range rep.Models {
		b.WriteString("| " + cell(m.Model) + " |")
		for _, c := range rep.Categories {
			for i < len(rep.Cells) && (rep.Cells[i].Model < m.Model) {
				i++
			}
			var x ReplayRow
			for j := i; j < len(rep.Cells) && rep.Cells[j].Model == m.Model; j++ {
				if rep.Cells[j].Category == c.Category {
					x = rep.Cells[j]
				}
			}
			s := pct(x.Accuracy())
			if x.Outputs == 0 {
				s = "–"
			} else if recorded && x.Recorded > 0 {
				s += " (" + pct(x.RecordedAccuracy()) + ")"
			}
			b.WriteString(" " + s + " |")
		}
		b.WriteString("\n")
	}
	if rep.All.Errors > 0 {
		fmt.Fprintf(&b, "\n%d replies could not be scored.\n", rep.All.Errors)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pct(f float64) string { return fmt.Sprintf("%.1f", 100*f) }

// cell writes text from a replay file in a Markdown table cell: control
// characters (a terminal's escape sequences among them) as Go escapes, '|'
// escaped.
func cell(s string) string {
	q := strings.Trim(fmt.Sprintf("%+q", s), `"`)
	return strings.ReplaceAll(q, "|", `\|`)
}

// ReplayDiffs writes the replies whose ptk verdict differs from the
// recorded one, at most limit of them (all when limit <= 0): the model,
// question, both verdicts, the reply (escaped, cut at 600 bytes) and the
// calls ptk read. Which says which to show: "gained" (ptk right, recorded
// wrong), "lost" (the other way round) or "all".
func ReplayDiffs(w io.Writer, rs []Replayed, which string, limit int) error {
	if which != "gained" && which != "lost" && which != "all" {
		return fmt.Errorf("eval: which differences: gained, lost or all, not %q", which)
	}
	var b strings.Builder
	n := 0
	for i := range rs {
		x := &rs[i]
		if !x.Differs() || which == "gained" && !x.Correct || which == "lost" && x.Correct {
			continue
		}
		if limit > 0 && n == limit {
			fmt.Fprintf(&b, "\n(more differences not shown: --limit)\n")
			break
		}
		n++
		verdict := "right"
		if !x.Correct {
			verdict = "wrong (" + x.Verdict.ErrorType + ")"
		}
		rec := "wrong"
		if *x.Recorded {
			rec = "right"
		}
		fmt.Fprintf(&b, "- %s %s: recorded %s, ptk %s\n", cell(x.Model), cell(x.ID), rec, verdict)
		raw := x.Text
		if len(raw) > 600 {
			k := 600
			for k > 0 && !utf8.RuneStart(raw[k]) {
				k--
			}
			raw = raw[:k] + "…"
		}
		fmt.Fprintf(&b, "  raw:   %+q\n", raw)
		switch {
		case slices.Contains(x.Invalid, string(protocol.DiagRepetitionLoop)):
			b.WriteString("  calls: none run (a repetition loop)\n")
		case len(x.Calls) == 0:
			b.WriteString("  calls: none\n")
		}
		for _, c := range x.Calls {
			fmt.Fprintf(&b, "  call:  %+q %+q", c.Tool, string(c.Args))
			if c.Error != "" {
				fmt.Fprintf(&b, " (%+q)", c.Error)
			}
			b.WriteString("\n")
		}
		if !x.Correct && len(x.Verdict.Errors) > 0 {
			fmt.Fprintf(&b, "  why:   %+q\n", strings.Join(x.Verdict.Errors, " "))
		}
	}
	if n == 0 {
		b.WriteString("No reply's verdict differs from the recorded one.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
