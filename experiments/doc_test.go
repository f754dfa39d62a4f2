package experiments

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// exported returns the exported names declared in the non-test files of
// the package in dir: functions, types, constants and variables (Name),
// and the methods, struct fields and interface methods of its types
// (Type.Name).
func exported(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no Go files (%v)", dir, err)
	}
	names := make(map[string]bool)
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
					continue
				}
				typ := d.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					names[id.Name+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					case *ast.TypeSpec:
						names[s.Name.Name] = true
						var fields *ast.FieldList
						switch typ := s.Type.(type) {
						case *ast.StructType:
							fields = typ.Fields
						case *ast.InterfaceType:
							fields = typ.Methods
						}
						if fields == nil {
							continue
						}
						for _, fl := range fields.List {
							for _, n := range fl.Names {
								names[s.Name.Name+"."+n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return names
}

// TestDocNamesExist checks that every name of a package of this module
// that the package documentation cites (pkg.Name or pkg.Type.Method)
// exists, so that the documentation does not describe an API that is gone.
func TestDocNamesExist(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{
		"datasets": "../datasets", "dp": "../dp", "featsel": "../featsel", "objpert": "../objpert",
		"perturb": "../perturb", "preprocess": "../datasets/preprocess", "private": "../private",
		"release": "../release", "selection": "../selection", "stability": "../stability", "trainer": "../trainer",
	}
	decls := make(map[string]map[string]bool)
	cited := 0
	for _, m := range regexp.MustCompile(`\b([a-z]+)\.([A-Z]\w*(?:\.[A-Z]\w*)?)`).FindAllStringSubmatch(string(doc), -1) {
		pkg, name := m[1], m[2]
		dir, ok := dirs[pkg]
		if !ok {
			continue
		}
		if decls[pkg] == nil {
			decls[pkg] = exported(t, dir)
		}
		cited++
		if !decls[pkg][name] {
			t.Errorf("the package documentation cites %s.%s, which package %s does not declare", pkg, name, pkg)
		}
	}
	if cited == 0 {
		t.Error("no name of the module cited: the pattern finds nothing")
	}
}
