// Package markdown reads the project's Markdown as GitHub shows it, enough
// to check it: code fences (CommonMark's rules), headings and their
// anchors (GitHub's), links, and code spans. The tests use it to keep the
// README and docs/ from drifting: every fence closed, every relative link
// and anchor there, every `ptk …` command line one the CLI accepts.
package markdown

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Doc is one Markdown file, read.
type Doc struct {
	Fences   []Fence
	Headings []Heading
	Links    []Link
	Spans    []Span
	// Problems are mistakes in the file's structure: a fence never
	// closed, an opening fence inside a fence (whose closer is missing).
	Problems []Problem
	// Comments are the HTML comments on lines of their own, by line.
	Comments map[int]string
}

// Fence is a fenced code block.
type Fence struct {
	Info  string   // the info string's first word: "sh", "json", "" …
	Line  int      // the opening fence's line, from 1
	Lines []string // the content, without the fences
}

// Heading is an ATX heading (# to ######).
type Heading struct {
	Level  int
	Text   string
	Line   int
	Anchor string // GitHub's id for it, made unique in the file
}

// Link is an inline link or image, or a reference definition.
type Link struct {
	Target string
	Line   int
}

// Span is an inline code span.
type Span struct {
	Text string
	Line int
}

// Problem is a structural mistake at a line.
type Problem struct {
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("line %d: %s", p.Line, p.Msg) }

var (
	fenceRE   = regexp.MustCompile("^\\s*(`{3,}|~{3,})(.*)$")
	headingRE = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	commentRE = regexp.MustCompile(`^\s*<!--\s*(.*?)\s*-->\s*$`)
	refDefRE  = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(\S+)`)
	// inline links and images: [text](target "title"), with one level of
	// brackets inside the text ([`x`](y), [![img](a)](b)).
	linkRE = regexp.MustCompile(`\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
)

// Parse reads text.
func Parse(text string) *Doc {
	d := &Doc{Comments: map[int]string{}}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	anchors := map[string]int{}
	var open *Fence
	var openMark string
	for i, line := range lines {
		n := i + 1
		if open != nil {
			if closes(line, openMark) {
				d.Fences = append(d.Fences, *open)
				open = nil
				continue
			}
			if m := fenceRE.FindStringSubmatch(line); m != nil && m[1][0] == openMark[0] && len(m[1]) >= len(openMark) &&
				strings.TrimSpace(m[2]) != "" && open.Info != "markdown" && open.Info != "md" {
				d.Problems = append(d.Problems, Problem{n, fmt.Sprintf("an opening fence (%s) inside the %s block opened at line %d: is that block's closing fence missing?", strings.TrimSpace(line), describe(open.Info), open.Line)})
			}
			open.Lines = append(open.Lines, line)
			continue
		}
		if m := fenceRE.FindStringSubmatch(line); m != nil && !(m[1][0] == '`' && strings.Contains(m[2], "`")) {
			info := strings.Fields(m[2])
			open = &Fence{Line: n}
			if len(info) > 0 {
				open.Info = strings.ToLower(info[0])
			}
			openMark = m[1]
			continue
		}
		if m := commentRE.FindStringSubmatch(line); m != nil {
			d.Comments[n] = m[1]
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			h := Heading{Level: len(m[1]), Text: m[2], Line: n}
			slug := Slug(h.Text)
			if k := anchors[slug]; k > 0 {
				h.Anchor = fmt.Sprintf("%s-%d", slug, k)
			} else {
				h.Anchor = slug
			}
			anchors[slug]++
			d.Headings = append(d.Headings, h)
		}
		if m := refDefRE.FindStringSubmatch(line); m != nil {
			d.Links = append(d.Links, Link{m[1], n})
			continue
		}
		// Code spans first: a link written inside one is code, not a link.
		rest := codeSpans(line, func(code string) { d.Spans = append(d.Spans, Span{code, n}) })
		for _, m := range linkRE.FindAllStringSubmatch(rest, -1) {
			d.Links = append(d.Links, Link{m[1], n})
		}
	}
	if open != nil {
		d.Problems = append(d.Problems, Problem{open.Line, fmt.Sprintf("the %s block opened here is never closed", describe(open.Info))})
	}
	return d
}

// codeSpans calls span with each code span of line (a run of backticks,
// the text, a run of as many) and returns line with the spans blanked.
func codeSpans(line string, span func(string)) string {
	b := []byte(line)
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(b) && b[j] == '`' {
			j++
		}
		run := j - i
		// the closing run: exactly as many backticks
		end := -1
		for k := j; k < len(b); {
			if b[k] != '`' {
				k++
				continue
			}
			m := k
			for m < len(b) && b[m] == '`' {
				m++
			}
			if m-k == run {
				end = k
				break
			}
			k = m
		}
		if end < 0 {
			i = j // a lone run is text
			continue
		}
		span(strings.TrimSpace(string(b[j:end])))
		for k := i; k < end+run; k++ {
			b[k] = 'x'
		}
		i = end + run
	}
	return string(b)
}

func describe(info string) string {
	if info == "" {
		return "code"
	}
	return info
}

// closes reports whether line closes a fence opened with mark: the same
// character, at least as many, nothing after but spaces.
func closes(line, mark string) bool {
	t := strings.TrimSpace(line)
	return len(t) >= len(mark) && strings.Trim(t, mark[:1]) == ""
}

// Slug is the anchor GitHub gives a heading's text: its words in lower
// case, joined by hyphens, without punctuation (code spans, emphasis and
// links read as their text).
func Slug(heading string) string {
	text := linkRE.ReplaceAllStringFunc(heading, func(s string) string {
		return s[1:strings.Index(s, "](")] // the link's text
	})
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r) || unicode.IsNumber(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// Files lists the Markdown files under root, leaving out folders that hold
// no documentation: hidden ones, node_modules, testdata.
func Files(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.EqualFold(filepath.Ext(path), ".md") {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}
