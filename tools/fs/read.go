package fs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"unicode/utf8"
)

// The read_file tool's name and description; its parameters are readArgs's
// fields.
const (
	readFileName        = "read_file"
	readFileDescription = `Read a text file in the workspace. Each line is shown with its line number, a tab, then the line, like "cat -n". ` +
		`Shows up to 2000 lines from offset (the 1-based first line, default 1); limit sets how many lines. ` +
		`When the file has more, the output ends with a note giving the offset to read on from. ` +
		`Lines longer than 2000 characters are cut, and output stops at about 50 KB. Binary files are refused. ` +
		`The path is relative to the workspace root. Use list_dir, glob or grep to find files.`
)

type readArgs struct {
	Path   string `json:"path" jsonschema:"The file, relative to the workspace root."`
	Offset int    `json:"offset,omitempty" jsonschema:"The line to start at, counting from 1. Default 1."`
	Limit  int    `json:"limit,omitempty" jsonschema:"How many lines to show. Default 2000."`
}

func (w *Workspace) readFile(ctx context.Context, a readArgs) (string, error) {
	if a.Path == "" {
		return "", failure("path is required")
	}
	if a.Offset < 0 || a.Limit < 0 {
		return "", failure("offset and limit must be positive")
	}
	first, limit := max(a.Offset, 1), a.Limit
	if limit == 0 {
		limit = maxReadLines
	}
	p, fi, err := w.stat(a.Path)
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return "", failf("%s is a directory; use list_dir", p)
	}
	f, _, err := openRegular(w.root, p)
	switch {
	case errors.Is(err, errNotRegular):
		return "", notRegular(p, fi)
	case errors.Is(err, syscall.EISDIR):
		return "", failf("%s is a directory; use list_dir", p)
	case err != nil:
		return "", accessError(p, err)
	}
	defer f.Close()

	if err := ctx.Err(); err != nil {
		return "", err
	}
	var src io.Reader = f
	if w.editor != nil {
		text, err := w.editorRead(ctx, p)
		if err != nil {
			return "", err
		}
		src = strings.NewReader(text)
	}
	lr := lineReader{ctx: ctx, br: bufio.NewReaderSize(src, 64<<10), max: maxLineBytes}
	if head, _ := lr.br.Peek(1); len(head) == 0 {
		return fmt.Sprintf("(%s is empty)", p), nil
	}

	var b strings.Builder
	n, last, full := 0, 0, false // lines read, last line shown, output full
	for {
		line, size, err := lr.next()
		if err == io.EOF {
			break
		}
		switch {
		case err == nil:
		case err == errBinary:
			return "", failf("%s is a binary file; read_file shows text files only", p)
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return "", err
		default:
			return "", failf("reading %s: %v", p, err)
		}
		if n++; n < first || n >= first+limit || full {
			continue
		}
		text := strings.ToValidUTF8(string(line), "\uFFFD")
		if size > len(line) {
			text += fmt.Sprintf(" … [line cut: %d bytes]", size)
		}
		if b.Len()+len(text)+8 > maxOutput && last > 0 {
			full = true
			continue
		}
		fmt.Fprintf(&b, "%6d\t%s\n", n, text)
		last = n
	}
	if first > n {
		return "", failf("offset %d is past the end of %s, which has %d lines", first, p, n)
	}
	if last < n {
		capped := ""
		if full {
			capped = "output capped at 50 KB; "
		}
		fmt.Fprintf(&b, "(%sshowing lines %d-%d of %d; use offset=%d to read on)\n", capped, first, last, n, last+1)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// errBinary is the error of a lineReader that met a NUL byte.
var errBinary = errors.New("binary")

// checkEvery is how many bytes a lineReader reads between two looks at its
// context: a few milliseconds of work, whatever the lines' length.
const checkEvery = 1 << 20

// A lineReader reads lines of any length, keeping at most max bytes of each.
// It looks at its context every checkEvery bytes, and fails with errBinary
// at the first NUL byte: a file with a NUL anywhere is binary, and is never
// shown as text, even in part.
type lineReader struct {
	ctx     context.Context
	br      *bufio.Reader
	max     int
	buf     []byte
	unsized int // bytes read since the context was last looked at
}

// next returns the next line without its line ending ("\n" or "\r\n"), cut
// to at most max bytes at a character boundary, and the line's full size. At
// the end of the input it returns io.EOF; when the context ends, its error.
func (r *lineReader) next() (line []byte, size int, err error) {
	r.buf = r.buf[:0]
	var tail [2]byte // the line's last two bytes
	for {
		frag, err := r.br.ReadSlice('\n')
		size += len(frag)
		if bytes.IndexByte(frag, 0) >= 0 {
			return nil, 0, errBinary
		}
		if r.unsized += len(frag); r.unsized >= checkEvery {
			r.unsized = 0
			if err := r.ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		if keep := r.max + 2 - len(r.buf); keep > 0 {
			r.buf = append(r.buf, frag[:min(keep, len(frag))]...)
		}
		switch len(frag) {
		case 0:
		case 1:
			tail = [2]byte{tail[1], frag[0]}
		default:
			tail = [2]byte{frag[len(frag)-2], frag[len(frag)-1]}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && size == 0 {
			return nil, 0, io.EOF
		}
		if err != nil && err != io.EOF {
			return nil, 0, err
		}
		break
	}
	if tail[1] == '\n' {
		size--
		if size > 0 && tail[0] == '\r' {
			size--
		}
	}
	line = r.buf[:min(len(r.buf), size)]
	if size > r.max {
		cut := r.max
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line = line[:cut]
	}
	return line, size, nil
}
