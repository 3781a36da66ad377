package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"strings"
	"testing"
)

// The dev corpus of recorded replies (../shared/corpus/bfcl-replay): 25,175
// replies of 19 models to BFCL v1 questions, with BFCL's verdicts by each
// model's own handler.
const (
	replayCorpus = "../../shared/corpus/bfcl-replay/dev.jsonl"
	// replayFloors holds the figures the dev corpus must not drop below.
	replayFloors = "testdata/replay_dev.json"
	// replayDoc holds the tables the replay command prints for the corpus.
	replayDoc = "../docs/bfcl-replay.md"
)

var updateReplay = flag.Bool("update-replay", false, "rewrite "+replayFloors+" and the tables in "+replayDoc+" from the dev corpus")

type replayFloor struct {
	Outputs         int `json:"outputs"`
	Correct         int `json:"correct"`
	RecordedCorrect int `json:"recorded_correct"`
}

type replayFloorFile struct {
	All    replayFloor            `json:"all"`
	Models map[string]replayFloor `json:"models"`
}

// TestReplayDevCorpus replays the dev corpus and fails when ptk reads fewer
// replies right than the floors say (overall or for any model), or fewer
// than a model's own handler did, or when the tables in docs/bfcl-replay.md
// are not the ones the replay prints.
func TestReplayDevCorpus(t *testing.T) {
	f, err := os.Open(replayCorpus)
	if err != nil {
		t.Skipf("the dev replay corpus is not here: %v", err)
	}
	recs, err := ReadRecorded(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	qs, err := Load(sharedDir, []string{"simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple", "irrelevance"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if raceEnabled {
		// The detector slows the 25,000 replies' replay twentyfold (ten
		// minutes on a loaded 2-core machine): it checks the replay's
		// parallel path on every 25th reply, and the figures are checked
		// without it (.ci/run runs this test so).
		var sample []Recorded
		for i := 0; i < len(recs); i += 25 {
			sample = append(sample, recs[i])
		}
		recs = sample
	}
	rs, err := Replay(context.Background(), qs, recs)
	if err != nil {
		t.Fatal(err)
	}
	rep := SummarizeReplay(rs)
	if rep.All.Errors > 0 {
		t.Errorf("%d replies could not be scored", rep.All.Errors)
	}
	if raceEnabled {
		t.Skipf("under -race: %d replies replayed, %d read right; the figures are checked without -race", rep.All.Outputs, rep.All.Correct)
	}
	got := replayFloorFile{All: floorOf(rep.All), Models: map[string]replayFloor{}}
	for _, m := range rep.Models {
		got.Models[m.Model] = floorOf(m)
	}
	var tables bytes.Buffer
	if err := ReplayMarkdown(&tables, rep); err != nil {
		t.Fatal(err)
	}
	if *updateReplay {
		writeReplayFloors(t, got)
		writeReplayDoc(t, tables.String())
		return
	}
	data, err := os.ReadFile(replayFloors)
	if err != nil {
		t.Fatalf("%v (run go test ./eval -run ReplayDevCorpus -update-replay to make it)", err)
	}
	var want replayFloorFile
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	check := func(name string, g, w replayFloor) {
		if g.Outputs != w.Outputs {
			t.Errorf("%s: %d replies replayed, the floors were set on %d", name, g.Outputs, w.Outputs)
		}
		if g.Correct < w.Correct {
			t.Errorf("%s: ptk reads %d of %d replies right, fewer than the %d it did", name, g.Correct, g.Outputs, w.Correct)
		}
		if g.Correct < g.RecordedCorrect {
			t.Errorf("%s: ptk reads %d of %d replies right, fewer than the model's own BFCL handler (%d)", name, g.Correct, g.Outputs, g.RecordedCorrect)
		}
	}
	check("all", got.All, want.All)
	for name, w := range want.Models {
		check(name, got.Models[name], w)
	}
	if 5*got.All.Correct < 4*got.All.Outputs {
		t.Logf("ptk reads %.2f%% of the replies right, under 80%%", 100*float64(got.All.Correct)/float64(got.All.Outputs))
	}
	if got.All.Correct > want.All.Correct {
		t.Logf("ptk reads %d replies right, more than the floor's %d: raise it with -update-replay", got.All.Correct, want.All.Correct)
	}
	doc, err := os.ReadFile(replayDoc)
	if err != nil {
		t.Fatal(err)
	}
	if section, ok := docTables(string(doc)); !ok || section != tables.String() {
		t.Errorf("the tables in %s are not what the replay prints now: run go test ./eval -run ReplayDevCorpus -update-replay", replayDoc)
	}
	t.Logf("ptk %d/%d (%.2f%%), BFCL's handlers %d", got.All.Correct, got.All.Outputs, 100*float64(got.All.Correct)/float64(got.All.Outputs), got.All.RecordedCorrect)
}

func floorOf(r ReplayRow) replayFloor {
	return replayFloor{Outputs: r.Outputs, Correct: r.Correct, RecordedCorrect: r.RecordedCorrect}
}

func writeReplayFloors(t *testing.T, f replayFloorFile) {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(replayFloors, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

const (
	docBegin = "<!-- the replay's tables: made by go test ./eval -run ReplayDevCorpus -update-replay -->\n"
	docEnd   = "<!-- end of the replay's tables -->\n"
)

// docTables returns the generated part of the replay page.
func docTables(doc string) (string, bool) {
	_, rest, ok := strings.Cut(doc, docBegin)
	if !ok {
		return "", false
	}
	section, _, ok := strings.Cut(rest, docEnd)
	return section, ok
}

func writeReplayDoc(t *testing.T, tables string) {
	doc, err := os.ReadFile(replayDoc)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(doc), docBegin)
	if !ok {
		t.Fatalf("%s has no line %q to put the tables after", replayDoc, docBegin)
	}
	_, after, ok := strings.Cut(rest, docEnd)
	if !ok {
		t.Fatalf("%s has no line %q to end the tables", replayDoc, docEnd)
	}
	if err := os.WriteFile(replayDoc, []byte(before+docBegin+tables+docEnd+after), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadRecorded(t *testing.T) {
	recs, err := ReadRecorded(strings.NewReader(`{"model": "m", "id": "simple_python_0", "raw": "", "bfcl_correct": false}

{"model": "m", "family": "F", "category": "irrelevance", "id": "irrelevance_0", "raw": "no", "underscore": true}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Raw != "" || recs[0].Correct == nil || *recs[0].Correct || recs[1].Correct != nil || !recs[1].Underscore || recs[1].Family != "F" {
		t.Fatalf("read %+v", recs)
	}
	for _, bad := range []struct{ in, msg string }{
		{`{"id": "x", "raw": "r"}`, `line 1: no "model"`},
		{`{"model": "m", "raw": "r"}`, `line 1: no "id"`},
		{"\n" + `{"model": "m", "id": "x"}`, `line 2: no "raw"`},
		{`{"model": "m", "id": "x", "raw": 5}`, `line 1: json: cannot unmarshal`},
		{`not json`, `line 1: invalid character`},
	} {
		_, err := ReadRecorded(strings.NewReader(bad.in))
		if err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%q: error %v, want %q", bad.in, err, bad.msg)
		}
	}
}

// TestReplayScoresAsARun replays replies to the in-repo sample and checks
// each is scored as the live run scores the same text.
func TestReplayScoresAsARun(t *testing.T) {
	qs, err := Load("testdata/bfcl", []string{"simple_python", "irrelevance"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	recs := []Recorded{
		{Model: "a", ID: "simple_python_0", Raw: "[calculate_triangle_area(base=10, height=5)]", Correct: &no},
		{Model: "a", ID: "irrelevance_0", Raw: "I cannot help with that.", Correct: &yes},
		{Model: "b", ID: "simple_python_0", Raw: "[calculate_triangle_area(base=10)]", Correct: &yes},
		{Model: "b", ID: "irrelevance_0", Raw: "[determine_body_mass_index(weight=70, height=1.75)]"},
	}
	rs, err := Replay(context.Background(), qs, recs)
	if err != nil {
		t.Fatal(err)
	}
	correct := []bool{true, true, false, false}
	for i, r := range rs {
		if r.Correct != correct[i] || r.Model != recs[i].Model || r.Text != recs[i].Raw || r.Mode != ModePTK || r.Prompt != "replay" {
			t.Errorf("reply %d: %+v, want correct %v", i, r, correct[i])
		}
	}
	if !rs[0].Differs() || rs[1].Differs() || !rs[2].Differs() || rs[3].Differs() {
		t.Errorf("differs: %v %v %v %v", rs[0].Differs(), rs[1].Differs(), rs[2].Differs(), rs[3].Differs())
	}
	rep := SummarizeReplay(rs)
	if rep.All != (ReplayRow{Outputs: 4, Correct: 2, Recorded: 3, RecordedCorrect: 2, Gained: 1, Lost: 1}) {
		t.Errorf("all: %+v", rep.All)
	}
	if len(rep.Models) != 2 || rep.Models[0].Model != "a" || rep.Models[0].Correct != 2 || rep.Models[1].Recorded != 1 {
		t.Errorf("models: %+v", rep.Models)
	}
	if len(rep.Categories) != 2 || rep.Categories[0].Category != "simple_python" || rep.Categories[1].Category != "irrelevance" {
		t.Errorf("categories: %+v", rep.Categories)
	}
	if len(rep.Cells) != 4 {
		t.Errorf("cells: %+v", rep.Cells)
	}
	var b strings.Builder
	if err := ReplayDiffs(&b, rs, "lost", 0); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "- b simple_python_0: recorded right, ptk wrong (simple_function_checker:missing_required)") || strings.Contains(out, "- a ") {
		t.Errorf("lost:\n%s", out)
	}
	if err := ReplayDiffs(&b, rs, "some", 0); err == nil {
		t.Error("ReplayDiffs took an unknown kind of difference")
	}

	// A reply to a question the data does not have, or filed under
	// another category, is an error.
	for _, rec := range []Recorded{{Model: "a", ID: "simple_python_9999", Raw: ""}, {Model: "a", ID: "simple_python_0", Category: "multiple"}} {
		if _, err := Replay(context.Background(), qs, []Recorded{rec}); !errors.Is(err, ErrUnknownQuestion) {
			t.Errorf("%+v: error %v", rec, err)
		}
	}
}

// TestReplayUnderscore declares the tools with '.' written '_' for a model
// shown them so, and scores its calls against the dotted answer.
func TestReplayUnderscore(t *testing.T) {
	qs, err := Load("testdata/bfcl", []string{"simple_python"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var q *Question
	for _, x := range qs {
		if strings.Contains(x.Functions[0].Name, ".") && len(x.Answer) == 1 {
			q = x
			break
		}
	}
	if q == nil {
		t.Skip("no dotted function in the sample")
	}
	args, _ := json.Marshal(argsOf(reference(q)[0].Args))
	written := strings.ReplaceAll(q.Functions[0].Name, ".", "_")
	raw := `<tool_call>{"name": "` + written + `", "arguments": ` + string(args) + `}</tool_call>`
	rs, err := Replay(context.Background(), qs, []Recorded{{Model: "h", ID: q.ID, Raw: raw, Underscore: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !rs[0].Correct || rs[0].Calls[0].Tool != q.Functions[0].Name {
		t.Errorf("%s: %+v", raw, rs[0].Result)
	}
}

// argsOf turns the checker's Dict back into a JSON-able map.
func argsOf(d *Dict) map[string]any {
	out := map[string]any{}
	for i, k := range d.Keys {
		v := d.Vals[i]
		if dd, ok := v.(*Dict); ok {
			v = argsOf(dd)
		}
		out[k] = v
	}
	return out
}

// TestReplayOutputIsEscaped replays a file written to attack the terminal
// and the Markdown it is shown in: escape sequences and '|' in the model's
// name, its id and its reply come out escaped.
func TestReplayOutputIsEscaped(t *testing.T) {
	qs, err := Load("testdata/bfcl", []string{"simple_python"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	evil := "m\x1b]0;pwned\x07|x\x1b[2J"
	rs, err := Replay(context.Background(), qs, []Recorded{{Model: evil, Family: "f|\x1b[31m", ID: "simple_python_0", Raw: "no call \x1b[2J\x1b]8;;http://x\x07 here", Correct: &yes}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := ReplayMarkdown(&b, SummarizeReplay(rs)); err != nil {
		t.Fatal(err)
	}
	if err := ReplayDiffs(&b, rs, "all", 0); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("a control character reached the output:\n%q", out)
	}
	if !strings.Contains(out, `m\x1b]0;pwned\a\|x\x1b[2J`) || strings.Count(out, `| m\x1b]0`) != 2 {
		t.Errorf("the model's name is not escaped in the tables:\n%s", out)
	}
}
