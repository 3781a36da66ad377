package distill

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Summary is the report in words, for the user: the splits, the sandbox,
// each round's verdict and why (the screen's reasons, the compiler's and
// the tests' output, the validation and sealed scores and the inputs
// answered wrongly). What a program printed is shown with its control
// characters made visible, never interpreted by the terminal.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d training, %d validation and %d sealed examples; gate on the sealed ones: wrong at most %.1f%%, coverage at least %.1f%%\n",
		r.Ptool, r.Train, r.Validation, r.Sealed, 100*r.MaxWrong, 100*r.MinCoverage)
	fmt.Fprintf(&b, "sandbox: %s\n", r.Sandbox)
	if len(r.Patterns) > 0 {
		fmt.Fprintf(&b, "patterns: %d\n", len(r.Patterns))
		for i, p := range r.Patterns {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, visible(p.Rule))
		}
	}
	indent := func(s string, n int) string {
		return strings.ReplaceAll(strings.TrimSpace(visible(capText(s, n))), "\n", "\n    ")
	}
	for _, rd := range r.Rounds {
		verdict := "accepted"
		if !rd.Accepted {
			verdict = "rejected: " + rd.Rejected
		}
		fmt.Fprintf(&b, "round %d: %s\n", rd.N, visible(verdict))
		for _, reason := range rd.Screen {
			fmt.Fprintf(&b, "  screen: %s\n", visible(reason))
		}
		if rd.Build != "" {
			fmt.Fprintf(&b, "  build:\n    %s\n", indent(rd.Build, 1500))
		}
		if rd.Compiled && !rd.TestsPassed {
			fmt.Fprintf(&b, "  tests failed: %s\n    %s\n", visible(strings.Join(rd.FailedTests, ", ")), indent(rd.Tests, 1500))
		}
		for _, i := range rd.Uncovered {
			if i < len(r.Patterns) {
				fmt.Fprintf(&b, "  no test tries pattern %d: %s\n", i+1, visible(r.Patterns[i].Rule))
			}
		}
		if rd.Unchecked {
			b.WriteString("  the tests pass when the code always falls back\n")
		}
		if len(rd.Flags) > 0 {
			fmt.Fprintf(&b, "  literals equal to validation inputs: %s\n", visible(strings.Join(rd.Flags, ", ")))
		}
		if rd.SealedFlags > 0 {
			fmt.Fprintf(&b, "  literals equal to sealed inputs: %d\n", rd.SealedFlags)
		}
		for _, s := range []struct {
			name  string
			score *Score
		}{{"validation", rd.Validation}, {"sealed", rd.Sealed}} {
			if s.score == nil {
				continue
			}
			fmt.Fprintf(&b, "  %s: %s\n", s.name, s.score.line())
			for i, c := range s.score.WrongCases {
				if i == 10 {
					fmt.Fprintf(&b, "    ... and %d more\n", len(s.score.WrongCases)-10)
					break
				}
				line := fmt.Sprintf("wrong: %s: want %s", c.Input, c.Want)
				if c.Got != nil {
					line += fmt.Sprintf(", got %s", c.Got)
				}
				if c.Error != "" {
					line += fmt.Sprintf(" (%s)", firstLine(c.Error))
				}
				fmt.Fprintf(&b, "    %s\n", visible(capText(line, 500)))
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

// visible returns s with its control characters (but newlines and tabs)
// and invalid bytes written as escapes, so a terminal shows them and does
// not act on them.
func visible(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.Is(unicode.Cc, r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
