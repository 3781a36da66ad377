package main

import (
	"io"

	"github.com/ptkit/ptk/internal/term"
)

// safeOutputs makes what ptk prints safe to show (internal/term): stderr
// always, since it is for people (progress, approvals, errors that quote a
// model); stdout when it is a terminal, so that a pipe still gets the bytes
// as they are. Whatever a command prints, from a model, a tool, a file or a
// trace, then reaches a terminal as text, its control sequences shown as
// escapes and never acted on.
func safeOutputs(stdout, stderr io.Writer) (io.Writer, io.Writer) {
	if isTerminal(stdout) {
		stdout = term.NewWriter(stdout)
	}
	return stdout, term.NewWriter(stderr)
}
