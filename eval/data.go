package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ptkit/ptk"
)

// Categories are BFCL's single-turn categories, in the leaderboard's order:
// the names of its files (BFCL_v4_<category>.json).
var Categories = []string{
	"simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple",
	"irrelevance", "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
	"live_irrelevance", "live_relevance",
}

// aliases name groups of categories on the command line.
var aliases = map[string][]string{
	"simple":    {"simple_python", "simple_java", "simple_javascript"},
	"python":    {"simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance"},
	"non_live":  {"simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple", "irrelevance"},
	"live":      {"live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance"},
	"all":       Categories,
	"ast":       {"simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple"},
	"relevance": {"irrelevance", "live_irrelevance", "live_relevance"},
}

// CategoryGroups are the names that stand for several categories on the
// command line (simple, python, non_live, live, ast, relevance, all),
// sorted.
func CategoryGroups() []string { return slices.Sorted(maps.Keys(aliases)) }

// ExpandCategories turns category names and aliases (simple: the three
// simple_* categories; python, non_live, live, ast, relevance, all) into
// category names, each once, in the order of Categories.
func ExpandCategories(names []string) ([]string, error) {
	want := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if a, ok := aliases[n]; ok {
			for _, c := range a {
				want[c] = true
			}
			continue
		}
		if !slices.Contains(Categories, n) {
			return nil, fmt.Errorf("unknown category %q: use %s, or simple, python, non_live, live, ast, relevance, all", n, strings.Join(Categories, ", "))
		}
		want[n] = true
	}
	var out []string
	for _, c := range Categories {
		if want[c] {
			out = append(out, c)
		}
	}
	return out, nil
}

// Question is one BFCL question.
type Question struct {
	ID       string
	Category string
	// Messages are the conversation of the question's one turn: usually one
	// user message, sometimes a system message first, or earlier turns.
	Messages []ptk.Message
	// Functions are the function documents as BFCL writes them: names may
	// hold dots, and parameters are BFCL's JSON-Schema-like dialect (dict,
	// float, tuple, any, Java and JavaScript type names).
	Functions []Function
	// Answer is the possible answer: one expected call per element, each
	// parameter with its acceptable values. Nil for the relevance categories.
	Answer []Expected

	// docs are Functions as the checker reads them, read once by Load (a
	// replay checks each question's answers tens of times).
	docs []*funcDoc
}

// Function is a BFCL function document.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Expected is one call of a possible answer: the function's name and, for
// each parameter the model may give, the values it may have ("" among them:
// the parameter may be left out).
type Expected struct {
	Name   string
	Params []Param
}

// Param is a parameter of an expected call and its acceptable values,
// decoded as Python's json module decodes them (see [Decode]).
type Param struct {
	Name       string
	Acceptable []any
}

// Language is the language a category's functions are written in.
func Language(category string) string {
	switch category {
	case "simple_java":
		return "java"
	case "simple_javascript":
		return "javascript"
	}
	return "python"
}

// Load reads the questions of categories (all when empty) from BFCL's data
// folder (the files BFCL_v4_<category>.json, and their twins under
// possible_answer/), each category's in file order, at most limit of each
// when limit is above zero.
func Load(dir string, categories []string, limit int) ([]*Question, error) {
	if len(categories) == 0 {
		categories = Categories
	}
	var out []*Question
	for _, cat := range categories {
		qs, err := loadCategory(os.DirFS(dir), cat, limit)
		if err != nil {
			return nil, err
		}
		out = append(out, qs...)
	}
	return out, nil
}

func loadCategory(fsys fs.FS, cat string, limit int) ([]*Question, error) {
	name := "BFCL_v4_" + cat + ".json"
	lines, err := readLines(fsys, name)
	if err != nil {
		return nil, err
	}
	answers := map[string][]Expected{}
	hasAnswers := !strings.Contains(cat, "relevance")
	if hasAnswers {
		alines, err := readLines(fsys, filepath.ToSlash(filepath.Join("possible_answer", name)))
		if err != nil {
			return nil, err
		}
		for i, l := range alines {
			var a struct {
				ID          string            `json:"id"`
				GroundTruth []json.RawMessage `json:"ground_truth"`
			}
			if err := json.Unmarshal(l, &a); err != nil {
				return nil, fmt.Errorf("possible_answer/%s:%d: %v", name, i+1, err)
			}
			var calls []Expected
			for _, g := range a.GroundTruth {
				c, err := decodeExpected(g)
				if err != nil {
					return nil, fmt.Errorf("possible_answer/%s:%d: %v", name, i+1, err)
				}
				calls = append(calls, c)
			}
			answers[a.ID] = calls
		}
	}
	var out []*Question
	for i, l := range lines {
		if limit > 0 && len(out) == limit {
			break
		}
		var q struct {
			ID       string          `json:"id"`
			Question json.RawMessage `json:"question"`
			Function []Function      `json:"function"`
		}
		if err := json.Unmarshal(l, &q); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, i+1, err)
		}
		msgs, err := decodeTurns(q.Question)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, i+1, err)
		}
		qu := &Question{ID: q.ID, Category: cat, Messages: msgs, Functions: q.Function, docs: funcDocs(q.Function)}
		if hasAnswers {
			a, ok := answers[q.ID]
			if !ok {
				return nil, fmt.Errorf("%s: question %s has no possible answer", name, q.ID)
			}
			qu.Answer = a
		}
		out = append(out, qu)
	}
	return out, nil
}

// decodeTurns reads BFCL's list of turns of chat messages into one
// conversation.
func decodeTurns(raw json.RawMessage) ([]ptk.Message, error) {
	var turns [][]struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(raw, &turns); err != nil {
		return nil, fmt.Errorf("question: %v", err)
	}
	var msgs []ptk.Message
	for _, t := range turns {
		for _, m := range t {
			msgs = append(msgs, ptk.Message{Role: ptk.Role(m.Role), Content: m.Content})
		}
	}
	if len(msgs) == 0 {
		return nil, errors.New("question: no message")
	}
	return msgs, nil
}

// decodeExpected reads one ground-truth call: {"name": {"param": [values]}}.
func decodeExpected(raw json.RawMessage) (Expected, error) {
	v, err := Decode(raw)
	if err != nil {
		return Expected{}, err
	}
	d, ok := v.(*Dict)
	if !ok || len(d.Keys) != 1 {
		return Expected{}, errors.New("a ground-truth call is not an object with one key")
	}
	params, ok := d.Vals[0].(*Dict)
	if !ok {
		return Expected{}, fmt.Errorf("the parameters of %s are not an object", d.Keys[0])
	}
	e := Expected{Name: d.Keys[0]}
	for i, k := range params.Keys {
		acc, ok := params.Vals[i].([]any)
		if !ok {
			return Expected{}, fmt.Errorf("%s.%s: the acceptable values are not a list", d.Keys[0], k)
		}
		e.Params = append(e.Params, Param{Name: k, Acceptable: acc})
	}
	return e, nil
}

func readLines(fsys fs.FS, name string) ([][]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			out = append(out, append([]byte(nil), l...))
		}
	}
	return out, sc.Err()
}
