package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"

	"github.com/spf13/cobra"

	"github.com/ptkit/ptk/eval"
)

type replayFlags struct {
	data, models, categories, diffs string
	limit                           int
	asJSON                          bool
}

func newEvalReplayCmd() *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Score replies models wrote before, as a live run would, against the verdicts recorded with them",
		Long: `replay reads recorded replies to BFCL questions (JSON Lines: "model", "id",
"raw" — the reply as the model wrote it — and optionally "family",
"category", "bfcl_correct", the verdict that run gave it, and "underscore",
when the model was shown the function names with '.' written '_'), and
scores each as a live 'ptk eval' run scores a reply in the text protocol:
the question's functions declared as tools, the reply read by ptk's parser,
the calls checked by the port of BFCL's checker. No model is called.

It prints ptk's accuracy per model and per category beside the recorded
one, then ptk's per model and category, then the replies whose verdict
differs (--diffs gained: ptk right where the record says wrong; lost: the
other way round; all; none), at most --limit of them. --json prints the
report and every scored reply as one JSON object instead.

--data is BFCL's data folder (or $PTK_BFCL_DATA) holding the questions the
replies answer. ../shared/corpus/bfcl-replay/dev.jsonl is such a file: 25,175
replies of 19 models with BFCL's own verdicts.

  ptk eval replay --data bfcl/v4 dev.jsonl
  ptk eval replay --data bfcl/v4 --models claude-2.1 --diffs lost --limit 0 dev.jsonl`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("replay needs one file of recorded replies: ptk eval replay --data DIR FILE")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runEvalReplay(cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.data, "data", "", "BFCL's data folder (env PTK_BFCL_DATA)")
	fl.StringVar(&f.models, "models", "", "comma-separated models to replay (default all in FILE)")
	fl.StringVar(&f.categories, "categories", "", "comma-separated categories or groups to replay (default all in FILE)")
	fl.StringVar(&f.diffs, "diffs", "all", "replies whose verdict differs to list: gained, lost, all or none")
	fl.IntVar(&f.limit, "limit", 20, "list at most N differing replies (0: all)")
	fl.BoolVar(&f.asJSON, "json", false, "print the report and every scored reply as JSON")
	return cmd
}

func runEvalReplay(cmd *cobra.Command, file string, f replayFlags) error {
	data := setting(cmd, "data", f.data, "", "PTK_BFCL_DATA")
	if data == "" {
		return usagef("replay needs BFCL's data for the questions: --data DIR or PTK_BFCL_DATA (the folder berkeley-function-call-leaderboard/bfcl_eval/data of github.com/ShishirPatil/gorilla)")
	}
	if !slices.Contains([]string{"gained", "lost", "all", "none"}, f.diffs) {
		return usagef("--diffs must be gained, lost, all or none, not %q", f.diffs)
	}
	if f.limit < 0 {
		return usagef("--limit must not be negative")
	}
	in, err := os.Open(file)
	if err != nil {
		return usageError{err}
	}
	recs, err := eval.ReadRecorded(in)
	in.Close()
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", file, err)}
	}
	if models := splitList(f.models); len(models) > 0 {
		known := map[string]bool{}
		for _, r := range recs {
			known[r.Model] = true
		}
		for _, m := range models {
			if !known[m] {
				return usagef("--models: %s has no reply of %q", file, m)
			}
		}
		recs = slices.DeleteFunc(recs, func(r eval.Recorded) bool { return !slices.Contains(models, r.Model) })
	}
	// The categories to load: those asked for, else those of the replies
	// (every category when a reply does not say).
	var cats []string
	if f.categories != "" {
		if cats, err = eval.ExpandCategories(splitList(f.categories)); err != nil {
			return usageError{fmt.Errorf("--categories: %w", err)}
		}
	} else {
		seen := map[string]bool{}
		for _, r := range recs {
			if r.Category == "" {
				cats = nil
				break
			}
			if !seen[r.Category] {
				seen[r.Category] = true
				cats = append(cats, r.Category)
			}
		}
		if cats, err = eval.ExpandCategories(cats); err != nil {
			return usageError{fmt.Errorf("%s: %w", file, err)}
		}
	}
	questions, err := eval.Load(data, cats, 0)
	if err != nil {
		return usageError{fmt.Errorf("--data %s: %w", data, err)}
	}
	if f.categories != "" {
		in := map[string]bool{}
		for _, q := range questions {
			in[q.ID] = true
		}
		recs = slices.DeleteFunc(recs, func(r eval.Recorded) bool { return !in[r.ID] })
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	rs, err := eval.Replay(ctx, questions, recs)
	if errors.Is(err, eval.ErrUnknownQuestion) {
		return usageError{fmt.Errorf("%w (is --data the BFCL version the replies answer?)", err)}
	}
	if err != nil {
		return err
	}
	rep := eval.SummarizeReplay(rs)
	out := cmd.OutOrStdout()
	if f.asJSON {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Report  eval.ReplayReport `json:"report"`
			Replies []eval.Replayed   `json:"replies"`
		}{rep, rs})
	}
	if err := eval.ReplayMarkdown(out, rep); err != nil {
		return err
	}
	if f.diffs == "none" || rep.All.Recorded == 0 {
		return nil
	}
	fmt.Fprintf(out, "\n## Replies where ptk and the recorded verdict differ (%s)\n\n", f.diffs)
	return eval.ReplayDiffs(out, rs, f.diffs, f.limit)
}
