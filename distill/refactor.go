package distill

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

const ptoolPath = "github.com/ptkit/ptk/ptool"

// Refactor rewrites the declaration of the ptool name in the Go file src
// into its distilled form, the seed design's CodeRefactorer: the call
// ptool.New[In, Out](...) that makes it (found by the ptool's name, its
// first argument, or by the variable it is assigned to) becomes
// ptool.Distill(nameCode, ptool.New[In, Out](...)), and the code of
// generated (a file written by File) is added to src as the function
// nameCode, its In and Out replaced by the declaration's types. The rest
// of src, comments and formatting included, is kept as it was.
func Refactor(src []byte, name string, generated []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "src.go", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	pt := importName(f, ptoolPath)
	if pt == "" {
		return nil, errors.New("distill: the file does not import " + ptoolPath)
	}
	call, types, err := findNew(f, pt, name)
	if err != nil {
		return nil, err
	}
	codeName := lowerCamel(name) + "Code"
	code, imports, err := codeOf(generated, codeName, types)
	if err != nil {
		return nil, err
	}
	start, end := fset.Position(call.Pos()).Offset, fset.Position(call.End()).Offset
	var b bytes.Buffer
	b.Write(src[:start])
	fmt.Fprintf(&b, "%s.Distill(%s, %s)", pt, codeName, src[start:end])
	b.Write(src[end:])
	b.WriteString("\n\n")
	b.WriteString(code)
	out := addImports(b.Bytes(), imports)
	res, err := format.Source(out)
	if err != nil {
		return nil, fmt.Errorf("distill: the rewritten file: %w", err)
	}
	return res, nil
}

// importName is the name a file gives the import of path ("" when none).
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == path {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return path[strings.LastIndex(path, "/")+1:]
		}
	}
	return ""
}

// findNew finds the call pt.New[In, Out](...) that makes the ptool name,
// and the source text of its In and Out.
func findNew(f *ast.File, pt, name string) (*ast.CallExpr, [2]string, error) {
	var found []*ast.CallExpr
	var inDistill bool
	var types [2]string
	isNew := func(e ast.Expr) (*ast.CallExpr, bool) {
		c, ok := e.(*ast.CallExpr)
		if !ok {
			return nil, false
		}
		il, ok := c.Fun.(*ast.IndexListExpr)
		if !ok || len(il.Indices) != 2 {
			return nil, false
		}
		sel, ok := il.X.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "New" {
			return nil, false
		}
		if id, ok := sel.X.(*ast.Ident); !ok || id.Name != pt {
			return nil, false
		}
		return c, true
	}
	match := func(c *ast.CallExpr, assigned string) {
		byLit := false
		if len(c.Args) > 0 {
			if lit, ok := c.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, _ := strconv.Unquote(lit.Value)
				byLit = s == name
			}
		}
		if byLit || assigned == name {
			found = append(found, c)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Distill" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == pt {
					for _, a := range n.Args {
						if c, ok := isNew(a); ok {
							before := len(found)
							match(c, "")
							inDistill = inDistill || len(found) > before
						}
					}
				}
			}
			if c, ok := isNew(n); ok {
				match(c, "")
			}
		case *ast.ValueSpec:
			for i, v := range n.Values {
				if c, ok := isNew(v); ok && i < len(n.Names) {
					match(c, n.Names[i].Name)
				}
			}
		case *ast.AssignStmt:
			for i, v := range n.Rhs {
				if c, ok := isNew(v); ok && i < len(n.Lhs) {
					if id, ok := n.Lhs[i].(*ast.Ident); ok {
						match(c, id.Name)
					}
				}
			}
		}
		return true
	})
	// a call matched twice (by name and by variable) is one
	uniq := map[*ast.CallExpr]bool{}
	var calls []*ast.CallExpr
	for _, c := range found {
		if !uniq[c] {
			uniq[c] = true
			calls = append(calls, c)
		}
	}
	switch {
	case inDistill:
		return nil, types, fmt.Errorf("distill: %s is already distilled", name)
	case len(calls) == 0:
		return nil, types, fmt.Errorf("distill: no %s.New[In, Out](%q, ...) declares the ptool %s", pt, name, name)
	case len(calls) > 1:
		return nil, types, fmt.Errorf("distill: %d declarations of the ptool %s", len(calls), name)
	}
	il := calls[0].Fun.(*ast.IndexListExpr)
	for i, e := range il.Indices {
		var b bytes.Buffer
		printer.Fprint(&b, token.NewFileSet(), e)
		types[i] = b.String()
	}
	return calls[0], types, nil
}

// codeOf returns the generated file's code as text for the file being
// rewritten: its Distilled function renamed codeName and its helpers, In
// and Out replaced by types, and the imports it needs.
func codeOf(generated []byte, codeName string, types [2]string) (string, map[string]string, error) {
	gfset := token.NewFileSet()
	g, err := parser.ParseFile(gfset, "generated.go", generated, parser.ParseComments)
	if err != nil {
		return "", nil, fmt.Errorf("distill: the generated code: %w", err)
	}
	imports := map[string]string{}
	for _, imp := range g.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := ""
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[p] = name
	}
	cmap := ast.NewCommentMap(gfset, g, g.Comments)
	var decls []ast.Decl
	hasCode := false
	for _, d := range g.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			if d.Tok == token.TYPE && declares(d, "In", "Out") {
				continue
			}
			if d.Tok == token.CONST && declares(d, "Name", "Doc") {
				continue
			}
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name == "New" {
				continue
			}
			if d.Recv == nil && d.Name.Name == "Distilled" {
				hasCode = true
			}
		}
		decls = append(decls, d)
	}
	if !hasCode {
		return "", nil, errors.New("distill: the generated code declares no func Distilled")
	}
	// What is merged (its imports and the declarations kept) passes the
	// screen the code passed before it was compiled.
	var importDecls []ast.Decl
	for _, d := range g.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			importDecls = append(importDecls, gd)
		}
	}
	merged := &ast.File{Name: g.Name, Decls: append(importDecls, decls...), Imports: g.Imports, Comments: g.Comments}
	if err := screenFile(gfset, merged, false); err != nil {
		return "", nil, err
	}
	for _, d := range decls {
		ast.Inspect(d, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				switch id.Name {
				case "In":
					id.Name = types[0]
				case "Out":
					id.Name = types[1]
				case "Distilled":
					id.Name = codeName
				}
			}
			return true
		})
	}
	var b bytes.Buffer
	for _, d := range decls {
		node := &printer.CommentedNode{Node: d, Comments: cmap.Filter(d).Comments()}
		if err := printer.Fprint(&b, gfset, node); err != nil {
			return "", nil, err
		}
		b.WriteString("\n\n")
	}
	return b.String(), imports, nil
}

func declares(d *ast.GenDecl, names ...string) bool {
	for _, s := range d.Specs {
		switch s := s.(type) {
		case *ast.TypeSpec:
			for _, n := range names {
				if s.Name.Name == n {
					return true
				}
			}
		case *ast.ValueSpec:
			for _, id := range s.Names {
				for _, n := range names {
					if id.Name == n {
						return true
					}
				}
			}
		}
	}
	return false
}

// addImports adds to src the imports it lacks, in its import block (or a
// new one after the package clause).
func addImports(src []byte, imports map[string]string) []byte {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "src.go", src, parser.ImportsOnly)
	if err != nil {
		return src
	}
	have := map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		have[p] = true
	}
	var add []string
	for p, name := range imports {
		if !have[p] {
			add = append(add, strings.TrimSpace(name+" "+strconv.Quote(p)))
		}
	}
	if len(add) == 0 {
		return src
	}
	sort.Strings(add)
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT && g.Rparen.IsValid() {
			at := fset.Position(g.Rparen).Offset
			return []byte(string(src[:at]) + "\t" + strings.Join(add, "\n\t") + "\n" + string(src[at:]))
		}
	}
	at := fset.Position(f.Name.End()).Offset
	return []byte(string(src[:at]) + "\n\nimport (\n\t" + strings.Join(add, "\n\t") + "\n)\n" + string(src[at:]))
}

// lowerCamel makes a ptool's name a Go identifier: classify_sentiment is
// classifySentiment.
func lowerCamel(name string) string {
	f := fieldName(name)
	r := []rune(f)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// snake is ClassifyReview as classify_review.
func snake(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
