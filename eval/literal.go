package eval

import (
	"regexp"
	"strconv"
	"strings"
)

// Java and JavaScript values reach BFCL's checker as strings holding
// literals; these decode them as BFCL's type converters do
// (eval_checker/ast_eval/type_convertor), keeping the string as it is when
// it is not a literal of the declared type.

var (
	reInt         = regexp.MustCompile(`^-?\d+$`)
	reJavaFloat   = regexp.MustCompile(`^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$`)
	reJavaDouble  = regexp.MustCompile(`^-?\d+(\.\d+)?([eE][+-]?\d+)?$`)
	reJavaLong    = regexp.MustCompile(`^-?\d+[lL]$`)
	reAsList      = regexp.MustCompile(`new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)`)
	reAddBlock    = regexp.MustCompile(`(?s)new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}`)
	reAdd         = regexp.MustCompile(`add\((.+?)\)`)
	reEmptyList   = regexp.MustCompile(`new\s+ArrayList<\w*>\(\)`)
	reJavaArray   = regexp.MustCompile(`new\s+\w+\[\]\s*\{(.*?)\}`)
	reHashMap     = regexp.MustCompile(`(?s)new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}`)
	rePut         = regexp.MustCompile(`put\("(.*?)",\s*(.*?)\)`)
	reEmptyMap    = regexp.MustCompile(`new\s+HashMap<.*?>\s*\(\)`)
	reJSFloat     = regexp.MustCompile(`^-?\d+(\.\d+)?$`)
	reJSBigint    = regexp.MustCompile(`^-?\d+n$`)
	reJS2DArray   = regexp.MustCompile(`^(?:\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\))`)
	reJSInner     = regexp.MustCompile(`\[(.*?)\]`)
	reJSArray     = regexp.MustCompile(`^(?:\[(.*?)\]|\bnew\s+Array\((.*?)\))`)
	reJSDict      = regexp.MustCompile(`^\{(.*?)\}`)
	pyIntLiteral  = regexp.MustCompile(`^\s*[-+]?\d+\s*$`)
	pyFloatLitera = regexp.MustCompile(`^\s*[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?|inf|infinity|nan)\s*$`)
)

// pyInt is Python's int(s) where it succeeds.
func pyInt(s string) (any, bool) {
	if !pyIntLiteral.MatchString(s) {
		return nil, false
	}
	s = strings.TrimSpace(s)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// pyFloat is Python's float(s) where it succeeds.
func pyFloat(s string) (float64, bool) {
	if !pyFloatLitera.MatchString(strings.ToLower(s)) {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil
}

// javaConvert decodes a Java literal of the declared type typ (items of
// nested, for arrays and lists).
func javaConvert(s, typ, nested string) any {
	switch typ {
	case "byte", "short", "integer":
		if reInt.MatchString(s) {
			if v, ok := pyInt(s); ok {
				return v
			}
		}
	case "float":
		if reJavaFloat.MatchString(s) {
			f, _ := strconv.ParseFloat(s[:len(s)-1], 64)
			return f
		}
	case "double":
		if reJavaDouble.MatchString(s) {
			f, _ := strconv.ParseFloat(s, 64)
			return f
		}
	case "long":
		if reJavaLong.MatchString(s) {
			if v, ok := pyInt(s[:len(s)-1]); ok {
				return v
			}
		}
	case "boolean":
		if s == "true" || s == "false" {
			return s == "true"
		}
	case "ArrayList":
		return javaArrayList(s, nested)
	case "Array":
		return javaArray(s, nested)
	case "HashMap":
		return javaHashMap(s)
	}
	// char (BFCL's pattern for it never matches), String, any, and what
	// does not parse: the string itself.
	return s
}

func javaElement(e, nested string) any {
	switch {
	case nested == "char" || nested == "String":
		if len(e) >= 2 {
			return e[1 : len(e)-1]
		}
		return ""
	case nested != "":
		if _, ok := javaTypes[nested]; !ok {
			return e
		}
		return javaConvert(e, nested, "")
	}
	return javaValue(e)
}

func javaArrayList(s, nested string) any {
	if m := reAsList.FindStringSubmatch(s); m != nil {
		out := []any{}
		for e := range strings.SplitSeq(m[1], ",") {
			out = append(out, javaElement(strings.TrimSpace(e), nested))
		}
		return out
	}
	if m := reAddBlock.FindStringSubmatch(s); m != nil {
		out := []any{}
		for _, a := range reAdd.FindAllStringSubmatch(m[1], -1) {
			out = append(out, javaElement(strings.TrimSpace(a[1]), nested))
		}
		return out
	}
	if reEmptyList.MatchString(s) {
		return []any{}
	}
	return s
}

func javaArray(s, nested string) any {
	m := reJavaArray.FindStringSubmatch(s)
	if m == nil {
		return s
	}
	out := []any{}
	for e := range strings.SplitSeq(m[1], ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		if nested != "" {
			if _, ok := javaTypes[nested]; ok {
				out = append(out, javaConvert(e, nested, ""))
				continue
			}
		}
		out = append(out, javaValue(e))
	}
	return out
}

func javaHashMap(s string) any {
	if m := reHashMap.FindStringSubmatch(s); m != nil {
		d := &Dict{}
		if strings.TrimSpace(m[1]) != "" {
			for _, p := range rePut.FindAllStringSubmatch(m[1], -1) {
				d.Set(p[1], javaValue(strings.TrimSpace(p[2])))
			}
		}
		return d
	}
	if reEmptyMap.MatchString(s) {
		return &Dict{}
	}
	return s
}

// javaValue decodes a Java literal of unknown type.
func javaValue(s string) any {
	switch {
	case s == "true":
		return true
	case s == "false":
		return false
	case len(s) >= 2 && strings.HasPrefix(s, `"`) && strings.HasSuffix(s, `"`):
		return s[1 : len(s)-1]
	case reJavaLong.MatchString(s):
		if v, ok := pyInt(s[:len(s)-1]); ok {
			return v
		}
	case reJavaFloat.MatchString(s):
		f, _ := strconv.ParseFloat(s[:len(s)-1], 64)
		return f
	}
	if v, ok := pyInt(s); ok {
		return v
	}
	if f, ok := pyFloat(s); ok {
		return f
	}
	return s
}

// jsConvert decodes a JavaScript literal of the declared type typ (items
// of nested, for arrays).
func jsConvert(s, typ, nested string) any {
	switch typ {
	case "String":
		if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
			return s[1 : len(s)-1]
		}
		if s == `"` || s == "'" {
			return ""
		}
	case "integer":
		if reInt.MatchString(s) {
			if v, ok := pyInt(s); ok {
				return v
			}
		}
	case "float":
		if reJSFloat.MatchString(s) {
			f, _ := strconv.ParseFloat(s, 64)
			return f
		}
	case "Bigint":
		if reJSBigint.MatchString(s) {
			if v, ok := pyInt(s[:len(s)-1]); ok {
				return v
			}
		}
	case "Boolean":
		if s == "true" || s == "false" {
			return s == "true"
		}
	case "dict":
		return jsDict(strings.TrimSpace(s))
	case "array":
		return jsArray(strings.TrimSpace(s), nested)
	}
	return s
}

func jsArray(code, nested string) any {
	if m := reJS2DArray.FindString(code); m != "" {
		out := []any{}
		for i, inner := range reJSInner.FindAllStringSubmatch(m, -1) {
			in := strings.TrimSpace(inner[1])
			if i == 0 && strings.HasPrefix(in, "[") {
				in = in[1:]
			}
			row := []any{}
			for e := range strings.SplitSeq(in, ",") {
				row = append(row, jsValue(strings.TrimSpace(e)))
			}
			out = append(out, row)
		}
		return out
	}
	m := reJSArray.FindStringSubmatchIndex(code)
	if m == nil {
		return code
	}
	var body string
	switch {
	case m[2] >= 0:
		body = code[m[2]:m[3]]
	case m[4] >= 0:
		body = code[m[4]:m[5]]
	}
	out := []any{}
	if body = strings.TrimSpace(body); body == "" {
		return out
	}
	for e := range strings.SplitSeq(body, ",") {
		e = strings.TrimSpace(e)
		if nested == "" {
			out = append(out, jsValue(e))
			continue
		}
		if _, ok := jsTypes[nested]; !ok {
			return code // BFCL's converter raises, and the string is kept
		}
		if strings.HasPrefix(e, "'") || strings.HasPrefix(e, `"`) {
			out = append(out, jsConvert(e, nested, "String"))
		} else {
			out = append(out, jsConvert(e, nested, ""))
		}
	}
	return out
}

func jsDict(code string) any {
	if code == "{}" {
		return &Dict{}
	}
	m := reJSDict.FindStringSubmatch(code)
	if m == nil {
		return code
	}
	d := &Dict{}
	for _, p := range jsPairs(m[1]) {
		key := strings.Trim(strings.TrimSpace(p[0]), `'"`)
		val := strings.TrimSpace(p[1])
		switch {
		case strings.HasPrefix(val, "[") && strings.HasSuffix(val, "]"):
			d.Set(key, jsArray(val, ""))
		case strings.HasPrefix(val, "{") && strings.HasSuffix(val, "}"):
			d.Set(key, jsDict(val))
		default:
			d.Set(key, jsValue(strings.Trim(val, `'"`)))
		}
	}
	return d
}

// jsPairs finds the key: value pairs BFCL's pattern
// ([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$) finds: a value ends at the first
// comma after which a key and a colon come before the next comma.
func jsPairs(s string) [][2]string {
	var out [][2]string
	pos := 0
	for pos < len(s) {
		j := strings.IndexByte(s[pos:], ':')
		if j < 0 {
			break
		}
		if j == 0 {
			pos++
			continue
		}
		key := s[pos : pos+j]
		v := pos + j + 1
		for v < len(s) && isSpace(s[v]) {
			v++
		}
		end, next := len(s), len(s)
		for c := v; c < len(s); c++ {
			if s[c] != ',' {
				continue
			}
			a := c + 1
			for a < len(s) && isSpace(s[a]) {
				a++
			}
			n := strings.IndexAny(s[a:], ",:")
			if n >= 1 && s[a+n] == ':' {
				end, next = c, a
				break
			}
		}
		out = append(out, [2]string{key, s[v:end]})
		pos = next
	}
	return out
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// jsValue decodes a JavaScript literal of unknown type.
func jsValue(s string) any {
	s = strings.TrimSpace(s)
	switch {
	case s == "true":
		return true
	case s == "false":
		return false
	case len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\''):
		return s[1 : len(s)-1]
	}
	if v, ok := pyInt(s); ok {
		return v
	}
	if f, ok := pyFloat(s); ok {
		return f
	}
	return s
}
