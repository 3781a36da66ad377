package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// maxStdin bounds what a prompt takes from standard input: far more than
// any model's context, and a clear error rather than a process that reads
// a device or an endless pipe until memory runs out.
const maxStdin = 8 << 20

// promptFrom makes a prompt of a command's arguments and its standard
// input, as shell tools do:
//
//	ptk run "What does this repository do?"   the arguments
//	git diff | ptk run "Review this change"    the arguments, a blank line, then the input
//	ptk run < prompt.txt                       the input (no arguments)
//	ptk run - < prompt.txt                     the input ("-" says so)
//
// The input is read only when it is data: a pipe or a file, not a terminal
// (where it would wait for typing) nor a device such as /dev/null. It must
// be UTF-8 text of at most 8 MiB. use says what is missing when nothing
// is given ("run needs a prompt"), example how to give it.
func promptFrom(stdin io.Reader, args []string, use, example string) (string, error) {
	text := strings.TrimSpace(strings.Join(args, " "))
	dash := len(args) == 1 && args[0] == "-"
	if dash {
		text = ""
	}
	var input string
	if dash || stdinIsData(stdin) {
		in, err := readStdin(stdin)
		if err != nil {
			return "", err
		}
		input = strings.TrimSpace(in)
	}
	switch {
	case text == "" && input == "":
		if dash {
			return "", usagef("%s, and standard input (-) is empty", use)
		}
		return "", usagef("%s, as arguments or on standard input: %s", use, example)
	case input == "":
		return text, nil
	case text == "":
		return input, nil
	}
	return text + "\n\n" + input, nil
}

// stdinIsData reports whether r is input to read rather than a terminal:
// a pipe or a regular file, or a reader that is no file at all (a program
// or a test that runs ptk with its own input).
func stdinIsData(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return r != nil
	}
	fi, err := f.Stat()
	if err != nil {
		return false // closed, or not there
	}
	m := fi.Mode()
	return m.IsRegular() || m&os.ModeNamedPipe != 0
}

// readStdin reads r whole, as UTF-8 text of at most maxStdin bytes.
func readStdin(r io.Reader) (string, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxStdin+1))
	if err != nil {
		return "", usagef("reading standard input: %v", err)
	}
	if len(data) > maxStdin {
		return "", usagef("standard input is over %d MiB: give less, or put it in a file in the workspace and name the file in the prompt", maxStdin>>20)
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return "", usagef("standard input is binary (a NUL byte at offset %d), not a prompt", i)
	}
	if !utf8.Valid(data) {
		return "", usagef("standard input is not UTF-8 text (%s): convert it first, e.g. with iconv", firstInvalid(data))
	}
	return string(data), nil
}

// firstInvalid says where data stops being UTF-8.
func firstInvalid(data []byte) string {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return fmt.Sprintf("byte 0x%02x at offset %d", data[i], i)
		}
		i += n
	}
	return "a byte sequence"
}
