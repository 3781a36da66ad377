package distill

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"strconv"
	"strings"
)

// ExpandOptions say what Expand makes of a function.
type ExpandOptions struct {
	// KeepCode keeps the function as the ptool's code path: it answers
	// first, and the model only where it returns ptool.ErrFallback. The
	// function must refer to ptool.ErrFallback, or the model would never
	// run.
	KeepCode bool
}

// Expand makes a ptool of the function fn of the Go file src, the reverse
// of Refactor: fn must be func(context.Context, In) (Out, error), and its
// doc comment becomes the ptool's doc. It adds
//
//	func NewFnPtool(opts ...ptool.Option) *ptool.PTool[In, Out]
//
// which makes the ptool (named after fn in snake case) with opts: the
// model opts give answers every call, and fn stays in the file as it was.
// With KeepCode it adds instead
//
//	func NewFnPtool(opts ...ptool.Option) *ptool.Distilled[In, Out]
//
// where fn answers first and the model only when fn returns
// ptool.ErrFallback.
func Expand(src []byte, fn string, opts ExpandOptions) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "src.go", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var decl *ast.FuncDecl
	for _, d := range f.Decls {
		if d, ok := d.(*ast.FuncDecl); ok && d.Recv == nil && d.Name.Name == fn {
			decl = d
		}
	}
	if decl == nil {
		return nil, fmt.Errorf("distill: no function %s in the file", fn)
	}
	text := func(e ast.Expr) string {
		var b bytes.Buffer
		printer.Fprint(&b, fset, e)
		return b.String()
	}
	params, results := decl.Type.Params.List, decl.Type.Results
	var ps []string
	for _, p := range params {
		n := len(p.Names)
		if n == 0 {
			n = 1
		}
		for range n {
			ps = append(ps, text(p.Type))
		}
	}
	var rs []string
	if results != nil {
		for _, r := range results.List {
			n := len(r.Names)
			if n == 0 {
				n = 1
			}
			for range n {
				rs = append(rs, text(r.Type))
			}
		}
	}
	if len(ps) != 2 || len(rs) != 2 || !strings.HasSuffix(ps[0], "Context") || rs[1] != "error" || decl.Type.TypeParams != nil {
		return nil, fmt.Errorf("distill: %s is func(%s) (%s): a ptool's code path is func(context.Context, In) (Out, error)",
			fn, strings.Join(ps, ", "), strings.Join(rs, ", "))
	}
	doc := strings.TrimSpace(decl.Doc.Text())
	if doc == "" {
		return nil, fmt.Errorf("distill: %s has no doc comment: it is the ptool's prompt", fn)
	}
	pt := importName(f, ptoolPath)
	imports := map[string]string{}
	if pt == "" {
		pt = "ptool"
		imports[ptoolPath] = ""
	}
	if opts.KeepCode && !fallsBack(decl.Body, pt) {
		return nil, fmt.Errorf("distill: %s never returns %s.ErrFallback, so with its code kept the model would never answer: expand it without keeping the code, or make it fall back where it is not sure", fn, pt)
	}
	name := snake(fn)
	ctor := "New" + fieldName(fn) + "Ptool"
	var b bytes.Buffer
	b.Write(src)
	if opts.KeepCode {
		fmt.Fprintf(&b, "\n\n// %s makes %s a ptool, %q, whose doc is %s's doc comment: %s\n// answers first, and the model that opts give when it returns %s.ErrFallback.\n",
			ctor, fn, name, fn, fn, pt)
		fmt.Fprintf(&b, "func %s(opts ...%s.Option) *%s.Distilled[%s, %s] {\n", ctor, pt, pt, ps[1], rs[0])
		fmt.Fprintf(&b, "\treturn %s.Distill(%s, %s.New[%s, %s](%q, %s, opts...))\n}\n", pt, fn, pt, ps[1], rs[0], name, strconv.Quote(doc))
	} else {
		fmt.Fprintf(&b, "\n\n// %s makes a ptool of %s, %q, whose doc is %s's doc comment: the model\n// that opts give answers it. %s is left as it was.\n",
			ctor, fn, name, fn, fn)
		fmt.Fprintf(&b, "func %s(opts ...%s.Option) *%s.PTool[%s, %s] {\n", ctor, pt, pt, ps[1], rs[0])
		fmt.Fprintf(&b, "\treturn %s.New[%s, %s](%q, %s, opts...)\n}\n", pt, ps[1], rs[0], name, strconv.Quote(doc))
	}
	out, err := format.Source(addImports(b.Bytes(), imports))
	if err != nil {
		return nil, fmt.Errorf("distill: the rewritten file: %w", err)
	}
	return out, nil
}

// fallsBack reports whether body refers to pt.ErrFallback.
func fallsBack(body *ast.BlockStmt, pt string) bool {
	found := false
	if body != nil {
		ast.Inspect(body, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "ErrFallback" {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == pt {
					found = true
				}
			}
			return !found
		})
	}
	return found
}
