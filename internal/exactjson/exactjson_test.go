package exactjson

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestUnmarshalMatchesFieldNamesExactly(t *testing.T) {
	var s struct {
		Data map[string]string `json:"data"`
	}
	if err := Unmarshal([]byte(`{"DATA":{"k":"v"}}`), &s); err != nil {
		t.Fatal(err)
	}
	if s.Data != nil {
		t.Errorf("DATA was read as data: %v", s.Data)
	}
	if err := Unmarshal([]byte(`{"data":{"k":"v"}}`), &s); err != nil || s.Data["k"] != "v" {
		t.Errorf("data not read: %v %v", s.Data, err)
	}
}

// TestNoCaseInsensitiveStructDecode fails when code outside tests decodes
// into a struct with encoding/json, whose case-insensitive field matching
// reads keys Kubernetes drops. Decoding into maps and `any` stays allowed.
func TestNoCaseInsensitiveStructDecode(t *testing.T) {
	root := filepath.Join("..", "..")
	checked := 0
	for _, dir := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			checked++
			for _, bad := range structDecodes(t, path) {
				t.Errorf("%s: encoding/json decodes into a struct case-insensitively; use exactjson.Unmarshal", bad)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 50 {
		t.Fatalf("only %d files checked: the walk did not find the source tree", checked)
	}
}

// exempt reports whether the comment just above call says
// "exactjson:insensitive", for code that must read as a case-insensitive
// reader in another system does.
func exempt(f *ast.File, fset *token.FileSet, call *ast.CallExpr) bool {
	line := fset.Position(call.Pos()).Line
	for _, g := range f.Comments {
		if end := fset.Position(g.End()).Line; (end == line-1 || end == line) && strings.Contains(g.Text(), "exactjson:insensitive") {
			return true
		}
	}
	return false
}

// structDecodes lists the positions of json.Unmarshal(data, &v) calls in
// path whose v is declared in the same function with a type that is not a
// map, an interface or `any`.
func structDecodes(t *testing.T, path string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	jsonName := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "encoding/json" {
			jsonName = "json"
			if imp.Name != nil {
				jsonName = imp.Name.Name
			}
		}
	}
	if jsonName == "" {
		return nil
	}
	var bad []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		types := map[string]ast.Expr{}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok && vs.Type != nil {
				for _, name := range vs.Names {
					types[name.Name] = vs.Type
				}
			}
			return true
		})
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 2 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Unmarshal" {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != jsonName {
				return true
			}
			addr, ok := call.Args[1].(*ast.UnaryExpr)
			if !ok || addr.Op != token.AND {
				return true
			}
			id, ok := addr.X.(*ast.Ident)
			if !ok {
				return true
			}
			if typ, ok := types[id.Name]; ok && isStruct(typ) && !exempt(f, fset, call) {
				bad = append(bad, fset.Position(call.Pos()).String())
			}
			return true
		})
	}
	return bad
}

var basic = map[string]bool{"any": true, "string": true, "bool": true, "int": true, "int32": true,
	"int64": true, "uint": true, "uint32": true, "uint64": true, "float32": true, "float64": true}

func isStruct(typ ast.Expr) bool {
	switch x := typ.(type) {
	case *ast.MapType, *ast.InterfaceType, *ast.ArrayType:
		return false
	case *ast.Ident:
		return !basic[x.Name]
	default:
		return true
	}
}
