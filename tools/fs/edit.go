package fs

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// The edit_file tool's name and description; its parameters are editArgs's
// fields.
const (
	editFileName        = "edit_file"
	editFileDescription = `Edit a text file in the workspace by replacing an exact string with another. ` +
		`old_string must match the file's content exactly, including indentation, whitespace and line breaks, and must occur exactly once, ` +
		`unless replace_all is true: include enough lines around the change to make it unique. ` +
		`Read the file first, and copy old_string from read_file's output without the line numbers and the tab before each line. ` +
		`Files with CRLF line endings keep them; write old_string and new_string with plain newlines. ` +
		`Returns a unified diff of the change. To create a file, or to replace all of its content, use write_file. ` +
		`The path is relative to the workspace root.`
)

type editArgs struct {
	Path       string `json:"path" jsonschema:"The file to edit, relative to the workspace root."`
	OldString  string `json:"old_string" jsonschema:"The exact text to replace."`
	NewString  string `json:"new_string" jsonschema:"The text to put in its place; it must differ from old_string."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_string, not just one. Default false."`
}

func (w *Workspace) editFile(ctx context.Context, a editArgs) (string, error) {
	e, err := w.planEdit(ctx, a)
	if err != nil {
		return "", err
	}
	defer e.d.Close()
	if err := w.store(ctx, e.d, []byte(e.result), e.d.fi.Mode().Perm(), true); err != nil {
		return "", err
	}
	return e.head + "\n" + e.diff, nil
}

// previewEdit is the diff an edit_file call would make to the file as it
// is now, worked out as the call would, without writing.
func (w *Workspace) previewEdit(ctx context.Context, a editArgs) (string, error) {
	e, err := w.planEdit(ctx, a)
	if err != nil {
		return "", err
	}
	e.d.Close()
	return e.diff, nil
}

// An edit is an edit_file call worked out against the file: the file's
// new text, and what the call answers.
type edit struct {
	d          *dest // the file; the caller closes it
	result     string
	head, diff string
}

// planEdit reads the file a names and works out the edit, or the failure
// the call answers.
func (w *Workspace) planEdit(ctx context.Context, a editArgs) (*edit, error) {
	if a.OldString == "" {
		return nil, failure("old_string is empty; to create a file, or to replace all of its content, use write_file")
	}
	if a.OldString == a.NewString {
		return nil, failure("old_string and new_string are the same; there is nothing to change")
	}
	d, err := w.target(a.Path, "edit_file", false)
	if err != nil {
		return nil, err
	}
	e, err := w.planEditOf(ctx, d, a)
	if err != nil {
		d.Close()
		return nil, err
	}
	return e, nil
}

func (w *Workspace) planEditOf(ctx context.Context, d *dest, a editArgs) (*edit, error) {
	p, fi := d.p, d.fi
	if fi == nil {
		return nil, failf("no such file: %s; to create a file, use write_file", short(p))
	}
	if fi.Size() > maxWrite {
		return nil, failf("%s is %d bytes; edit_file edits files of at most 10 MB", short(p), fi.Size())
	}
	data, err := w.readDest(ctx, d)
	if err != nil {
		return nil, err
	}
	if len(data) > maxWrite {
		return nil, failf("%s is %d bytes; edit_file edits files of at most 10 MB", short(p), len(data))
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, failf("%s is a binary file; edit_file edits text files only", short(p))
	}

	text := string(data)
	crlf := isCRLF(text)
	old, repl := withEOL(a.OldString, crlf), withEOL(a.NewString, crlf)
	n, at := find(text, old)
	if n == 0 && old != a.OldString {
		old, repl = a.OldString, a.NewString
		n, at = find(text, old)
	}
	switch {
	case n == 0:
		return nil, notFound(p, text, a.OldString)
	case n > 1 && !a.ReplaceAll:
		return nil, failf("old_string was found %d times in %s, at %s; add the lines around the one to change to old_string to make it unique, or set replace_all to true to replace every one",
			n, short(p), lineList(text, at))
	case len(text)+n*(len(repl)-len(old)) > maxWrite:
		return nil, failf("the edit would make %s larger than 10 MB", short(p))
	}
	head := fmt.Sprintf("Edited %s: %s", printable(p), count(n, "replacement", "replacements"))
	if crlf && (old != a.OldString || repl != a.NewString) {
		head += " (CRLF line endings kept)"
	}
	return &edit{d: d, result: strings.ReplaceAll(text, old, repl), head: head, diff: diff(p, text, old, repl, n, at, crlf)}, nil
}

// isCRLF reports whether most of text's lines end in "\r\n".
func isCRLF(text string) bool {
	n := strings.Count(text, "\n")
	return n > 0 && 2*strings.Count(text, "\r\n") > n
}

// withEOL returns s with its line endings made "\r\n" if crlf, else "\n".
func withEOL(s string, crlf bool) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if crlf {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	return s
}

// find returns how many times old occurs in text, not overlapping, and the
// offsets of the first maxDiffLines.
func find(text, old string) (n int, at []int) {
	for i := 0; ; n++ {
		j := strings.Index(text[i:], old)
		if j < 0 {
			return n, at
		}
		if n < maxDiffLines {
			at = append(at, i+j)
		}
		i += j + len(old)
	}
}

// lineList says on which lines of text the offsets at are: "line 3" or
// "lines 3, 7, 12", the first ten.
func lineList(text string, at []int) string {
	var nums []string
	line, pos := 1, 0
	for _, i := range at {
		line += strings.Count(text[pos:i], "\n")
		pos = i
		if s := strconv.Itoa(line); !slices.Contains(nums, s) {
			if len(nums) == 10 {
				return "lines " + strings.Join(nums, ", ") + ", …"
			}
			nums = append(nums, s)
		}
	}
	if len(nums) == 1 {
		return "line " + nums[0]
	}
	return "lines " + strings.Join(nums, ", ")
}

// notFound describes for the model an old_string that is not in text, with
// where it is if only whitespace differs.
func notFound(p, text, old string) error {
	start, end, ok := nearMiss(text, old)
	if !ok {
		return failf("old_string was not found in %s; it must match the file's current content exactly (read_file shows it)", short(p))
	}
	how := "whitespace"
	if slices.Equal(trimLines(text[start:end]), trimLines(old)) {
		how = "indentation"
	}
	first := 1 + strings.Count(text[:start], "\n")
	last := first + strings.Count(text[start:end], "\n")
	where := "line " + strconv.Itoa(first)
	if last > first {
		where = fmt.Sprintf("lines %d-%d", first, last)
	}
	return failf("old_string was not found in %s; a match ignoring %s is at %s; old_string must match exactly, including whitespace", short(p), how, where)
}

// nearMiss finds old in text with every run of whitespace taken as one
// space, and returns where in text the first match starts and ends.
func nearMiss(text, old string) (start, end int, ok bool) {
	o := strings.TrimSpace(collapse(old))
	i := strings.Index(collapse(text), o)
	if o == "" || i < 0 {
		return 0, 0, false
	}
	// o starts and ends with other than a space, which stand for one byte each.
	return offset(text, i), offset(text, i+len(o)-1) + 1, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// collapse returns s with every run of ASCII whitespace made one space.
func collapse(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) {
			if i > 0 && isSpace(s[i-1]) {
				continue
			}
			b = append(b, ' ')
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

// offset returns the offset in s of the byte at offset i of collapse(s).
func offset(s string, i int) int {
	n := 0
	for j := 0; j < len(s); j++ {
		if isSpace(s[j]) && j > 0 && isSpace(s[j-1]) {
			continue
		}
		if n == i {
			return j
		}
		n++
	}
	return len(s)
}

// trimLines returns the lines of s without the whitespace around each.
func trimLines(s string) []string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range ls {
		ls[i] = strings.TrimSpace(l)
	}
	return ls
}

// diff returns a unified diff, with 3 lines of context, of replacing old by
// repl in text, the file p, at the first of the n offsets at. It shows at
// most maxDiffLines lines, and says what it leaves out.
func diff(p, text, old, repl string, n int, at []int, crlf bool) string {
	// Replacements on one line or on adjacent lines make one edit, so that
	// the diff shows their old lines together and then their new ones.
	var edits []udiff.Edit
	shown := 0 // replacements in edits
	for lines := 0; shown < len(at) && lines <= maxDiffLines; shown++ {
		i := at[shown]
		e := udiff.Edit{Start: i, End: i + len(old), New: repl}
		if k := len(edits) - 1; k >= 0 && strings.Count(text[edits[k].End:i], "\n") <= 1 {
			e.Start, e.New = edits[k].Start, edits[k].New+text[edits[k].End:i]+repl
			edits = edits[:k]
		}
		edits = append(edits, e)
		lines += strings.Count(old, "\n") + strings.Count(repl, "\n") + 2
	}
	d, err := udiff.ToUnified("a/"+p, "b/"+p, text, edits, 3)
	if err != nil {
		return "" // cannot happen: the edits are in order and apart
	}
	if crlf {
		d = strings.ReplaceAll(d, "\r\n", "\n")
	}
	ls := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	switch {
	case len(ls) > maxDiffLines:
		ls = append(ls[:maxDiffLines], fmt.Sprintf("(diff cut at %d lines)", maxDiffLines))
	case shown < n:
		ls = append(ls, fmt.Sprintf("(diff shows the first %d of %d replacements)", shown, n))
	}
	return strings.Join(ls, "\n")
}
