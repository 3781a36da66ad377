package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ptkit/ptk/trace"
)

// distilledDays is how many days back ptk traces stats shows a distilled
// function's coverage, a day a column.
const distilledDays = 7

// printDistilled writes the DISTILLED section of ptk traces stats: for
// each ptool whose calls a distilled function answered (code, or the model
// after the code fell back), its calls, the share the code answered
// (coverage), the calls where the code failed (an error, a panic, an
// answer that does not fit: not answered) and the share it left to the
// model, then the coverage on each of the last days that had calls.
func printDistilled(ctx context.Context, w io.Writer, s *trace.Store, f trace.Filter, st *trace.Stats) error {
	var rows []trace.Stat
	for _, r := range st.Ptools {
		if r.Code+r.CodeErrors+r.Fallbacks > 0 {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	end := time.Now()
	if !f.Until.IsZero() {
		end = f.Until
	}
	day := end.Truncate(24 * time.Hour)
	type cell struct {
		day   time.Time
		calls int
		cov   float64
	}
	byName := map[string][]cell{}
	for i := distilledDays - 1; i >= 0; i-- {
		from := day.Add(-time.Duration(i) * 24 * time.Hour)
		df := f
		df.Since, df.Until = from, from.Add(24*time.Hour)
		if !f.Since.IsZero() && df.Until.Before(f.Since) {
			continue
		}
		ds, err := s.Stats(ctx, df)
		if err != nil {
			return err
		}
		for _, r := range ds.Ptools {
			if n := r.Code + r.CodeErrors + r.Fallbacks; n > 0 {
				byName[r.Name] = append(byName[r.Name], cell{from, n, float64(r.Code) / float64(n)})
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "DISTILLED\tCALLS\tCODE\tCODE FAILED\tFELL BACK\tCOVERAGE\tFALLBACK RATE\tCOVERAGE BY DAY (UTC)\n")
	for _, r := range rows {
		n := r.Code + r.CodeErrors + r.Fallbacks
		var days []string
		for _, c := range byName[r.Name] {
			days = append(days, fmt.Sprintf("%s %.0f%% of %d", c.day.UTC().Format("01-02"), 100*c.cov, c.calls))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.0f%%\t%.0f%%\t%s\n", r.Name, n, r.Code, r.CodeErrors, r.Fallbacks,
			100*float64(r.Code)/float64(n), 100*float64(r.Fallbacks)/float64(n), dash(strings.Join(days, ", ")))
	}
	return tw.Flush()
}
