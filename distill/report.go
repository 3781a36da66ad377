package distill

import (
	"fmt"
	"strings"
)

// Summary is the report in words: the rounds, the held-out score of each,
// why it was rejected, and the inputs the code answered wrongly.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d training and %d held-out examples; gate: wrong at most %.1f%%, coverage at least %.1f%%\n",
		r.Ptool, r.Train, r.HeldOut, 100*r.MaxWrong, 100*r.MinCoverage)
	fmt.Fprintf(&b, "sandbox: %s\n", r.Sandbox)
	for _, rd := range r.Rounds {
		verdict := "accepted"
		if !rd.Accepted {
			verdict = "rejected: " + rd.Rejected
		}
		fmt.Fprintf(&b, "round %d: %s\n", rd.N, verdict)
		if !rd.Compiled {
			fmt.Fprintf(&b, "  %s\n", strings.ReplaceAll(strings.TrimSpace(capText(rd.Build, 1500)), "\n", "\n  "))
		}
		if rd.Compiled && !rd.TestsPassed {
			fmt.Fprintf(&b, "  tests failed:\n  %s\n", strings.ReplaceAll(strings.TrimSpace(capText(rd.Tests, 1500)), "\n", "\n  "))
		}
		if s := rd.Score; s != nil {
			fmt.Fprintf(&b, "  %s\n", s.line())
			for i, c := range s.WrongCases {
				if i == 10 {
					fmt.Fprintf(&b, "  ... and %d more\n", len(s.WrongCases)-10)
					break
				}
				fmt.Fprintf(&b, "  wrong: %s: want %s", c.Input, c.Want)
				if c.Got != nil {
					fmt.Fprintf(&b, ", got %s", c.Got)
				}
				if c.Error != "" {
					fmt.Fprintf(&b, " (%s)", firstLine(c.Error))
				}
				b.WriteString("\n")
			}
		}
	}
	if r.Accepted {
		fmt.Fprintf(&b, "accepted after %d round(s)\n", len(r.Rounds))
	} else {
		fmt.Fprintf(&b, "no candidate passed in %d round(s)\n", len(r.Rounds))
	}
	return b.String()
}
