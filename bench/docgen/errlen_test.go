package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// maxErrorString is the most characters an error-string literal may have
// (the format of fmt.Errorf, the text of errors.New, the format given to a
// function whose name ends in Err or Errorf, such as datasets' lineErr):
// a message says the reason and what to do in one line; the explanation
// goes in the doc comment of the sentinel or the function.
const maxErrorString = 120

// TestErrorStringLength scans the project's Go files (not tests) for error
// strings longer than maxErrorString.
func TestErrorStringLength(t *testing.T) {
	long, err := longErrorStrings(filepath.Join("..", ".."), maxErrorString)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range long {
		t.Errorf("%s: shorten it to %d characters; explain in the doc comment", l, maxErrorString)
	}
}

// TestLongErrorStrings checks the scanner on a file of each form.
func TestLongErrorStrings(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 121)
	src := `package p

import ("errors"; "fmt")

var a = errors.New("` + long + `")
var b = fmt.Errorf("%w: ` + long[:60] + `" + "` + long[:60] + `", a)
var c = lineErr(3, "short")
var d = cellErr(1, 2, "` + long + `", 4)
var e = errors.New("` + long[:120] + `")
var f = other("` + long + `")
`
	for name, text := range map[string]string{"p.go": src, "p_test.go": "package p\nvar g = errors.New(\"" + long + "\")\n"} {
		if err := os.MkdirAll(filepath.Join(dir, "pkg"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pkg", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := longErrorStrings(dir, 120)
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, l := range got {
		lines = append(lines, l.line)
	}
	if len(lines) != 3 || lines[0] != 5 || lines[1] != 6 || lines[2] != 8 {
		t.Errorf("found %v, want the strings of lines 5, 6 and 8", got)
	}
}

// longString is an error-string literal over the limit.
type longString struct {
	file string // slash-separated, relative to the root
	line int
	text string
}

func (l longString) String() string {
	short := l.text
	if len(short) > 50 {
		short = short[:50] + "..."
	}
	return fmt.Sprintf("%s:%d: %d characters: %q", l.file, l.line, len([]rune(l.text)), short)
}

// longErrorStrings returns the error-string literals of the Go files under
// root (not tests, not testdata or hidden directories) longer than max
// characters, in file order.
func longErrorStrings(root string, max int) ([]longString, error) {
	var out []longString
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !isErrorCall(call.Fun) {
				return true
			}
			for _, arg := range call.Args {
				if s, ok := literal(arg); ok {
					if len([]rune(s)) > max {
						out = append(out, longString{filepath.ToSlash(rel), fset.Position(arg.Pos()).Line, s})
					}
					break // the first string is the message or its format
				}
			}
			return true
		})
		return nil
	})
	return out, err
}

// isErrorCall reports whether fun is errors.New, fmt.Errorf, a function
// or method whose name ends in Err or Errorf, or one of usageCalls.
func isErrorCall(fun ast.Expr) bool {
	var name string
	switch f := fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok && x.Name == "errors" && f.Sel.Name == "New" {
			return true
		}
		name = f.Sel.Name
	default:
		return false
	}
	return strings.HasSuffix(name, "Err") || strings.HasSuffix(name, "Errorf") || usageCalls[name]
}

// usageCalls are the functions that make the commands' usage and settings
// errors from a format (runflags.Usagef, publish's settingsf).
var usageCalls = map[string]bool{"usagef": true, "Usagef": true, "settingsf": true}

// literal returns the value of a string literal, or of a sum of them.
func literal(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, ok1 := literal(e.X)
		y, ok2 := literal(e.Y)
		return x + y, ok1 && ok2
	case *ast.ParenExpr:
		return literal(e.X)
	}
	return "", false
}
