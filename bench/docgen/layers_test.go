package main

import (
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataFlowLayers reads the package list of docs/DESIGN.md, section 2
// ("each package imports only ones above it"), and checks it against the
// packages' imports: every import of a listed package from the module,
// but internal ones, is listed on an earlier line (or is a subpackage
// named on the same line, datasets/paper beside datasets). It fails when a
// package moves or a new import runs up the list.
func TestDataFlowLayers(t *testing.T) {
	root := filepath.Join("..", "..")
	design, err := os.ReadFile(filepath.Join(root, "docs", "DESIGN.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(design)
	start := strings.Index(text, "## 2. Data flow")
	end := strings.Index(text, "## 3. ")
	if start < 0 || end < start {
		t.Fatal("docs/DESIGN.md has no section 2, Data flow")
	}
	const module = "github.com/stabpriv/stabpriv/"
	line := map[string]int{} // package -> its line in the list
	n := 0
	for _, l := range strings.Split(text[start:end], "\n") {
		if !strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "     ") {
			continue
		}
		n++
		fields := strings.Fields(l)
		for _, f := range fields {
			name := strings.TrimSuffix(f, ",")
			if _, err := os.Stat(filepath.Join(root, name)); err != nil {
				break
			}
			line[name] = n
			if !strings.HasSuffix(f, ",") {
				break
			}
		}
	}
	if len(line) < 20 {
		t.Fatalf("read %d packages from the list: %v", len(line), line)
	}
	for pkg, at := range line {
		if pkg == "cmd/stabpriv" {
			continue
		}
		p, err := build.ImportDir(filepath.Join(root, pkg), 0)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		for _, imp := range p.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok || strings.Contains(dep, "internal") {
				continue
			}
			top := dep
			if i := strings.IndexByte(dep, '/'); i >= 0 && line[dep] == 0 {
				top = dep[:i] // a subpackage of a listed one (perturb/marginal)
			}
			if d, listed := line[top]; !listed || d >= at && top != pkg {
				t.Errorf("%s (line %d of the list) imports %s (line %d): not above it", pkg, at, dep, d)
			}
		}
	}
}
