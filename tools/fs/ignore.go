package fs

import (
	"bufio"
	"io"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// alwaysIgnored names entries that listings and searches never show, at any
// depth, whatever the ignore files say.
var alwaysIgnored = []string{".git", "node_modules"}

// ignoreFiles are read in every directory, in this order; a later file (and a
// deeper directory) takes precedence, so .ptkignore can re-include with "!"
// what .gitignore leaves out.
var ignoreFiles = []string{".gitignore", ".ptkignore"}

// A rule is one pattern line of an ignore file, with git's meaning
// (gitignore(5)).
type rule struct {
	base     string         // directory of the ignore file, "." for the root
	re       *regexp.Regexp // the pattern, anchored at both ends
	anchored bool           // matched against the path below base, not the name
	dirOnly  bool           // the pattern ended with "/"
	negate   bool           // the pattern began with "!"
}

// match reports whether the rule matches p, a slash path relative to the
// workspace root that lies below r.base.
func (r *rule) match(p string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	if !r.anchored {
		return r.re.MatchString(path.Base(p))
	}
	if r.base != "." {
		p = p[len(r.base)+1:]
	}
	return r.re.MatchString(p)
}

// parseIgnore returns the rules of an ignore file in directory base, in
// file order. Lines that are not valid patterns are skipped, as git does.
func parseIgnore(base string, r io.Reader) []rule {
	var rules []rule
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if ru, ok := parseRule(base, sc.Text()); ok {
			rules = append(rules, ru)
		}
	}
	return rules
}

func parseRule(base, line string) (rule, bool) {
	line = strings.TrimSuffix(line, "\r")
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if line == "" || line[0] == '#' {
		return rule{}, false
	}
	r := rule{base: base}
	if line[0] == '!' {
		r.negate, line = true, line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly, line = true, line[:len(line)-1]
	}
	if strings.Contains(line, "/") {
		r.anchored, line = true, strings.TrimPrefix(line, "/")
	}
	if line == "" {
		return rule{}, false
	}
	re, err := regexp.Compile(wildmatch(line))
	if err != nil {
		return rule{}, false
	}
	r.re = re
	return r, true
}

// wildmatch translates a gitignore pattern into a regular expression: "*",
// "?" and "[...]" never match "/"; "**" as a whole segment matches any number
// of directories ("**/x", "a/**/b") or everything inside ("a/**"); any other
// "**" is a plain "*".
func wildmatch(pat string) string {
	var b strings.Builder
	b.WriteString(`^`)
	segs := strings.Split(pat, "/")
	afterStars := false // the last segment written was a leading or middle "**"
	for i, seg := range segs {
		if seg == "**" && len(segs) > 1 {
			switch {
			case i == len(segs)-1 && afterStars:
				b.WriteString(`.*`)
			case i == len(segs)-1:
				b.WriteString(`/.*`)
			default:
				if i > 0 && !afterStars {
					b.WriteString(`/`)
				}
				b.WriteString(`(?:.*/)?`)
			}
			afterStars = true
			continue
		}
		if i > 0 && !afterStars {
			b.WriteString(`/`)
		}
		afterStars = false
		segment(&b, seg)
	}
	b.WriteString(`$`)
	return b.String()
}

// segment writes one path segment of a pattern as a regular expression.
func segment(b *strings.Builder, s string) {
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '*':
			b.WriteString(`[^/]*`)
			i++
		case '?':
			b.WriteString(`[^/]`)
			i++
		case '[':
			if class, n := bracket(s[i:]); n > 0 {
				b.WriteString(class)
				i += n
			} else {
				b.WriteString(`\[`)
				i++
			}
		case '\\':
			i++
			if i == len(s) {
				return // a trailing backslash matches nothing more
			}
			fallthrough
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			b.WriteString(regexp.QuoteMeta(string(r)))
			i += n
		}
	}
}

// bracket translates the character class at the start of s ("[a-z]",
// "[!0-9]", "[[:alpha:]_]") and returns it with the number of bytes it used,
// or 0 if s holds no complete class.
func bracket(s string) (string, int) {
	var b strings.Builder
	b.WriteString(`[`)
	i := 1
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		b.WriteString(`^/`)
		i++
	}
	for first := true; i < len(s); first = false {
		if s[i] == ']' && !first {
			b.WriteString(`]`)
			return b.String(), i + 1
		}
		if strings.HasPrefix(s[i:], "[:") {
			if end := strings.Index(s[i+2:], ":]"); end >= 0 {
				b.WriteString(s[i : i+2+end+2])
				i += 2 + end + 2
				continue
			}
		}
		r, n := classRune(s[i:])
		i += n
		b.WriteString(quoteClassRune(r))
		if i+1 < len(s) && s[i] == '-' && s[i+1] != ']' {
			r, n := classRune(s[i+1:])
			b.WriteString(`-` + quoteClassRune(r))
			i += 1 + n
		}
	}
	return "", 0
}

// classRune decodes one, possibly backslash-escaped, character of a class.
func classRune(s string) (rune, int) {
	if s[0] == '\\' && len(s) > 1 {
		r, n := utf8.DecodeRuneInString(s[1:])
		return r, n + 1
	}
	return utf8.DecodeRuneInString(s)
}

func quoteClassRune(r rune) string {
	if r < utf8.RuneSelf && !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
		return `\` + string(r)
	}
	return string(r)
}

// An ignorer decides which entries listings and searches leave out. It reads
// the ignore files of a directory the first time it needs them; one ignorer
// serves one tool call.
type ignorer struct {
	root  *os.Root
	rules map[string][]rule // by directory, lowest precedence first
	off   bool              // the call starts inside an ignored directory: hide nothing
}

// newIgnorer returns the ignorer for a call that lists or searches start. A
// path named explicitly is never hidden: if start lies in an ignored
// directory (or is one), nothing below it is hidden either.
func newIgnorer(root *os.Root, start string, isDir bool) *ignorer {
	ig := &ignorer{root: root, rules: map[string][]rule{}}
	for p := start; p != "."; p = path.Dir(p) {
		if ig.ignored(p, isDir || p != start) {
			ig.off = true
			break
		}
	}
	return ig
}

// ignored reports whether p, a slash path relative to the workspace root,
// is hidden by the rules, given that the directory holding it is not.
func (ig *ignorer) ignored(p string, isDir bool) bool {
	if ig.off {
		return false
	}
	if slices.Contains(alwaysIgnored, path.Base(p)) {
		return true
	}
	rules := ig.rulesFor(path.Dir(p))
	for i := len(rules) - 1; i >= 0; i-- {
		if rules[i].match(p, isDir) {
			return !rules[i].negate
		}
	}
	return false
}

// rulesFor returns the rules that apply in dir: those of its parent, then
// those of its own ignore files. At the root, .git/info/exclude comes first.
func (ig *ignorer) rulesFor(dir string) []rule {
	if rs, ok := ig.rules[dir]; ok {
		return rs
	}
	var rs []rule
	if dir == "." {
		rs = ig.load(".", ".git/info/exclude")
	} else {
		rs = slices.Clip(ig.rulesFor(path.Dir(dir)))
	}
	for _, name := range ignoreFiles {
		rs = append(rs, ig.load(dir, path.Join(dir, name))...)
	}
	ig.rules[dir] = rs
	return rs
}

// load reads the rules of the ignore file name, if it is a regular file:
// one that is something else (a FIFO, a socket, a device) counts as absent,
// and is never opened in a way that could block.
func (ig *ignorer) load(base, name string) []rule {
	f, _, err := openRegular(ig.root, name)
	if err != nil {
		return nil
	}
	defer f.Close()
	return parseIgnore(base, io.LimitReader(f, maxIgnoreFile))
}
