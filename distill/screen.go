package distill

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
)

// Allowed are the packages distilled code may import: computation on
// values, with nothing that reaches files, the network, processes, the
// environment or memory behind the type system. Tests may also import
// testing.
var Allowed = []string{
	"context", "encoding/json", "errors", "fmt", "maps", "math", "regexp", "slices", "sort",
	"strconv", "strings", "time", "unicode", "unicode/utf8", ptoolPath,
}

// allowedPtool are the names of package ptool that distilled code may use.
var allowedPtool = []string{"ErrFallback"}

// goroutines are the functions of allowed packages that start a goroutine:
// a go statement by another name.
var goroutines = []string{"time.AfterFunc", "context.AfterFunc"}

// ErrScreened is what a ScreenError is: the code uses what distilled code
// may not.
var ErrScreened = errors.New("distill: the code uses what distilled code may not")

// ScreenError lists why Screen rejected a file, one reason a line, each with
// its position.
type ScreenError struct {
	Reasons []string
}

func (e *ScreenError) Error() string {
	return ErrScreened.Error() + ":\n" + strings.Join(e.Reasons, "\n")
}

// Unwrap makes errors.Is(err, ErrScreened) hold.
func (e *ScreenError) Unwrap() error { return ErrScreened }

// Screen checks a Go file a model wrote before anything compiles it, and
// again before `ptk refactor distill` merges it into a user's file: it
// imports only the Allowed packages (and testing in a _test.go file), and
// of ptool only ErrFallback; it has no cgo (import "C"), no unsafe, no
// init function, no go statement, no //go: or //line directive or build
// constraint line, no package-level variable whose initializer calls a
// function literal or a function of the file (code that would run when the
// user's program starts), no TestMain, and no name starting with ptk (the
// scoring harness's). A file that fails gets a *ScreenError (ErrScreened)
// naming each reason, which goes back to the model as feedback.
func Screen(filename string, src []byte) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return &ScreenError{Reasons: []string{err.Error()}}
	}
	return screenFile(fset, f, strings.HasSuffix(filename, "_test.go"))
}

// screenFile is Screen on a parsed file.
func screenFile(fset *token.FileSet, f *ast.File, test bool) error {
	var reasons []string
	add := func(n ast.Node, format string, args ...any) {
		reasons = append(reasons, fset.Position(n.Pos()).String()+": "+fmt.Sprintf(format, args...))
	}
	allowed := Allowed
	if test {
		allowed = append(slices.Clone(Allowed), "testing")
	}
	ptoolName := ""
	pkgNames := map[string]string{} // name in the file: import path
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		switch {
		case path == "C":
			add(imp, "cgo (import \"C\") is not allowed")
			continue
		case !slices.Contains(allowed, path):
			add(imp, "imports %s: distilled code may import only %s", path, strings.Join(allowed, ", "))
			continue
		}
		if imp.Name != nil && imp.Name.Name == "." {
			add(imp, "a dot import of %s is not allowed", path)
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		pkgNames[name] = path
		if path == ptoolPath {
			ptoolName = name
		}
	}
	// pkgVar returns the package selector at the root of e (time.Local in
	// time.Local, unicode.Upper in unicode.Upper.R16[0]).
	pkgVar := func(e ast.Expr) *ast.SelectorExpr {
		for {
			switch x := e.(type) {
			case *ast.ParenExpr:
				e = x.X
			case *ast.IndexExpr:
				e = x.X
			case *ast.StarExpr:
				e = x.X
			case *ast.SliceExpr:
				e = x.X
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok {
					if _, ok := pkgNames[id.Name]; ok {
						return x
					}
				}
				e = x.X
			default:
				return nil
			}
		}
	}
	changes := func(e ast.Expr) {
		if sel := pkgVar(e); sel != nil {
			add(e, "changing %s.%s is not allowed: a package's variables are the whole program's", sel.X.(*ast.Ident).Name, sel.Sel.Name)
		}
	}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			text := c.Text
			switch {
			case strings.HasPrefix(text, "//go:"), strings.HasPrefix(text, "//line "), strings.HasPrefix(text, "/*line "):
				add(c, "the directive %q is not allowed", firstField(text))
			case strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(text, "//")), "+build"):
				add(c, "a +build line is not allowed")
			}
		}
	}
	funcs := map[string]bool{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
			funcs[fd.Name.Name] = true
			switch {
			case fd.Name.Name == "init":
				add(fd, "an init function is not allowed: it would run when the program starts")
			case test && fd.Name.Name == "TestMain":
				add(fd, "TestMain is not allowed: the tests are run as they are")
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			add(n, "a go statement is not allowed: distilled code runs on the caller's goroutine")
		case *ast.Ident:
			if strings.HasPrefix(n.Name, "ptk") || strings.HasPrefix(n.Name, "TestPtk") {
				add(n, "the name %s is not allowed: names starting with ptk are the scoring harness's", n.Name)
			}
		case *ast.SelectorExpr:
			id, ok := n.X.(*ast.Ident)
			if !ok {
				break
			}
			if ptoolName != "" && id.Name == ptoolName && !slices.Contains(allowedPtool, n.Sel.Name) {
				add(n, "%s.%s is not allowed: of package ptool, distilled code uses only ErrFallback", id.Name, n.Sel.Name)
			}
			if path, ok := pkgNames[id.Name]; ok && slices.Contains(goroutines, path+"."+n.Sel.Name) {
				add(n, "%s.%s is not allowed: it starts a goroutine", id.Name, n.Sel.Name)
			}
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				changes(l)
			}
		case *ast.IncDecStmt:
			changes(n.X)
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				changes(n.X)
			}
		}
		return true
	})
	// Package-level variables run their initializers when the program
	// starts: library calls (regexp.MustCompile) are fine, calling code of
	// the file is init by another name.
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				ast.Inspect(v, func(n ast.Node) bool {
					c, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					switch fun := ast.Unparen(c.Fun).(type) {
					case *ast.FuncLit:
						add(c, "a package-level variable may not call a function literal: it would run when the program starts")
					case *ast.Ident:
						if funcs[fun.Name] {
							add(c, "a package-level variable may not call %s: it would run when the program starts", fun.Name)
						}
					}
					return true
				})
			}
		}
	}
	if len(reasons) > 0 {
		return &ScreenError{Reasons: reasons}
	}
	return nil
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}
