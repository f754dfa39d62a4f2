package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// modulePath is the import path of the project's root module.
const modulePath = "github.com/stabpriv/stabpriv"

// archPackage is a package of the project as go list describes it.
type archPackage struct {
	ImportPath, Dir, Name, Doc string
	GoFiles, Imports           []string
	// Path is ImportPath within the module ("datasets/preprocess"); Deps
	// its imports from the module, Layer its layer.
	Path  string   `json:"-"`
	Deps  []string `json:"-"`
	Layer int      `json:"-"`
}

// step is one step of a data flow: a symbol (package path, a dot, a name
// or Type.Method) and what happens there. The generator checks that the
// symbol exists, so the prose cannot name a function that is gone.
type step struct{ Symbol, What string }

// csvRowFlow is the way of a CSV row through `stabpriv train`.
var csvRowFlow = []step{
	{"datasets.ReadTableFileHeader", "the file: cmd/stabpriv's train opens the data CSV under its caps"},
	{"datasets/internal/rawcsv.Records.Next", "the reader: records split in place, quoted ones by encoding/csv"},
	{"datasets.TableReader.Read", "the table: a float64 per cell, the text of the cells that are not numbers"},
	{"datasets.ReadBoundsFile", "the bounds (--bounds) and the schema's categories (--schema, datasets.ReadCategoriesFile)"},
	{"datasets.Schema.Validate", "the schema: label, classes, bounds, categories, declared before the rows are read"},
	{"private.FitInPlace", "the certified pipeline, which does the rest in the storage the reader filled"},
	{"datasets.Table.EncodeInPlace", "the row against the schema, in place: raw feature values with a free entry for the bias, the encoded label"},
	{"datasets.Encoded.Split", "the seeded split into training and test rows; datasets.Encoded.Select moves the training rows first, in place"},
	{"datasets/preprocess.NewRowMap", "the row map: public bounds, categories one-hot or hashed, the bias"},
	{"datasets/preprocess.RowMap.RowsInPlace", "the mapped rows, each of norm at most kappa, in the same storage (one copy of the rows)"},
	{"release.TrainRows", "the trainer's call by the release method"},
	{"trainer.Trainer.Train", "SGD with the knobs; the Run record of every constant used"},
	{"stability.Analyze", "stability: Delta and beta by every route on the Run record"},
	{"stability.Report.Best", "the tightest valid route"},
	{"perturb.Calibrate", "the noise law's scale for Delta and (eps, delta)"},
	{"perturb.Add", "the noise draw from the source (perturb.Secure for a release)"},
	{"release.OutputCertificate", "the certificate: dp's claim (route, constants, ledger) with the run record (release.Certificate)"},
	{"modelfile.Released.WriteFile", "the model file; certify reads it (modelfile.Read) and rebuilds it (modelfile.Verify)"},
}

// epsilonFlow is the way of --epsilon from the command line to the noise.
var epsilonFlow = []step{
	{"cmd/runflags.Flags.Register", "--epsilon and --delta are flags of cmd/runflags"},
	{"cmd/runflags.Flags.Check", "they become a dp.Budget of the run; --mechanism is looked up once (release.Lookup) and held in the options (Method)"},
	{"dp.Budget.Validate", "eps > 0 finite, 0 <= delta < 1"},
	{"private.NewPlan", "the plan holds the method and the shares, and opens the fit's one dp.Ledger on the budget"},
	{"dp.Ledger.Spend", "the bounds' estimate and the principal components take their charges from the plan's ledger as they run"},
	{"dp.Ledger.Left", "the release (or the selection) is handed what the ledger leaves"},
	{"release.Method", "Prepare and Release of the chosen method at that budget"},
	{"perturb.Calibrate", "eps and delta set the noise scale for Delta"},
	{"perturb.Add", "the noise draw"},
	{"dp.Ledger.Charges", "the release's charges are taken from the same ledger; its charges, in order, are the certificate's Ledger"},
	{"dp.Budget.Covers", "the ledger's exact sum stays within the budget (certify checks it again)"},
}

// arch writes docs/ARCHITECTURE.md from `go list -json ./...`.
func arch(args []string) error {
	fs := flag.NewFlagSet("docgen arch", flag.ExitOnError)
	out := fs.String("o", "docs/ARCHITECTURE.md", "output file (- for standard output)")
	fs.Parse(args)
	text, err := archText(".")
	if err != nil {
		return err
	}
	if *out == "-" {
		_, err = os.Stdout.WriteString(text)
		return err
	}
	return os.WriteFile(*out, []byte(text), 0o644)
}

// listPackages runs go list in the module at root and returns its
// packages with their imports from the module and their layers.
func listPackages(root string) (map[string]*archPackage, error) {
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	data, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v: %s", err, stderr.String())
	}
	pkgs := make(map[string]*archPackage)
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		p := new(archPackage)
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list: %v", err)
		}
		p.Path = strings.TrimPrefix(p.ImportPath, modulePath+"/")
		pkgs[p.Path] = p
	}
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if dep, ok := strings.CutPrefix(imp, modulePath+"/"); ok {
				p.Deps = append(p.Deps, dep)
			}
		}
	}
	var layer func(p *archPackage, seen map[string]bool) int
	done := make(map[string]bool)
	layer = func(p *archPackage, seen map[string]bool) int {
		if done[p.Path] || seen[p.Path] {
			return p.Layer
		}
		seen[p.Path] = true
		for _, d := range p.Deps {
			if q := pkgs[d]; q != nil {
				p.Layer = max(p.Layer, layer(q, seen)+1)
			}
		}
		done[p.Path] = true
		return p.Layer
	}
	for _, p := range pkgs {
		layer(p, map[string]bool{})
	}
	return pkgs, nil
}

// archText returns docs/ARCHITECTURE.md for the module at root.
func archText(root string) (string, error) {
	pkgs, err := listPackages(root)
	if err != nil {
		return "", err
	}
	for _, flow := range [][]step{csvRowFlow, epsilonFlow} {
		for _, s := range flow {
			for _, sym := range append([]string{s.Symbol}, namedIn(pkgs, s.What)...) {
				if err := checkSymbol(pkgs, sym); err != nil {
					return "", err
				}
			}
		}
	}
	paths := make([]string, 0, len(pkgs))
	top := 0
	for path, p := range pkgs {
		paths = append(paths, path)
		top = max(top, p.Layer)
	}
	slices.Sort(paths)
	var b strings.Builder
	b.WriteString(archIntro)
	fmt.Fprintf(&b, "\n## The layers\n\n%d packages in %d layers. A package's layer is the longest chain of the\n", len(pkgs), top+1)
	b.WriteString("project's imports below it: layer 0 imports no package of the project, and every\npackage imports only from layers below its own.\n\n```\n")
	for l := top; l >= 0; l-- {
		var row []string
		for _, path := range paths {
			if pkgs[path].Layer == l {
				row = append(row, path)
			}
		}
		writeWrapped(&b, fmt.Sprintf("%2d  ", l), row, 96)
	}
	b.WriteString("```\n\n## The packages\n\nEach package's contract is the first sentence of its doc comment; it imports the\nproject packages listed.\n\n")
	b.WriteString("| layer | package | contract | imports |\n|---:|---|---|---|\n")
	slices.SortStableFunc(paths, func(x, y string) int { return pkgs[y].Layer - pkgs[x].Layer })
	for _, path := range paths {
		p := pkgs[path]
		deps := slices.Clone(p.Deps)
		slices.Sort(deps)
		fmt.Fprintf(&b, "| %d | `%s` | %s | %s |\n", p.Layer, path, mdCell(p.Doc), mdCell(strings.Join(deps, ", ")))
	}
	b.WriteString("\n## The data flow of a CSV row (`stabpriv train`)\n\n")
	writeFlow(&b, csvRowFlow)
	b.WriteString("\n## The data flow of epsilon\n\n")
	writeFlow(&b, epsilonFlow)
	return b.String(), nil
}

// archIntro opens the document.
const archIntro = `<!-- Generated by ` + "`make arch`" + ` (go run ./bench/docgen arch) from go list; edit bench/docgen/arch.go, not this file. -->

# Architecture

The packages of the module github.com/stabpriv/stabpriv as ` + "`go list`" + ` sees them
(the Beam pipeline, beam/, is a module of its own above them), laid out by
layer, each with its contract; then the way of a CSV row and of epsilon
through ` + "`stabpriv train`" + `, naming the functions as they are (the generator
checks that each exists). The design card's rule: the privacy types (budget,
ledger, claim) are the ground floor, the noise beside them, the trainer above.
`

// writeWrapped writes the names after prefix, wrapped at width columns
// under the prefix's indentation.
func writeWrapped(b *strings.Builder, prefix string, names []string, width int) {
	line := prefix
	indent := strings.Repeat(" ", len(prefix))
	for i, n := range names {
		if i > 0 && len(line)+2+len(n) > width {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = indent
		} else if i > 0 {
			line += "  "
		}
		line += n
	}
	b.WriteString(line + "\n")
}

// writeFlow writes a flow as a numbered list.
func writeFlow(b *strings.Builder, flow []step) {
	for i, s := range flow {
		pkg, name := splitSymbol(s.Symbol)
		fmt.Fprintf(b, "%d. `%s.%s` (%s): %s\n", i+1, filepath.Base(pkg), name, pkg, s.What)
	}
}

// namedIn returns the symbols the prose of a step names as pkg.Name, pkg
// being the last element of a package's path (release.Lookup,
// modelfile.Verify), so that they are checked as the steps' are.
func namedIn(pkgs map[string]*archPackage, text string) []string {
	var out []string
	for _, m := range qualified.FindAllStringSubmatch(text, -1) {
		for path := range pkgs {
			if path == m[1] || strings.HasSuffix(path, "/"+m[1]) {
				out = append(out, path+"."+m[2])
			}
		}
	}
	return out
}

// qualified matches a qualified identifier: a package name, a dot, an
// exported name.
var qualified = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9]*)`)

// mdCell escapes text for a cell of a Markdown table.
func mdCell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// splitSymbol splits "path/pkg.Name.Method" into the package path and
// "Name.Method".
func splitSymbol(sym string) (pkg, name string) {
	slash := strings.LastIndexByte(sym, '/')
	dot := strings.IndexByte(sym[slash+1:], '.')
	if dot < 0 {
		return sym, ""
	}
	return sym[:slash+1+dot], sym[slash+2+dot:]
}

// checkSymbol returns an error unless sym names a package of pkgs and, in
// it, an exported function, type, variable or constant, or a method of a
// type.
func checkSymbol(pkgs map[string]*archPackage, sym string) error {
	path, name := splitSymbol(sym)
	p := pkgs[path]
	if p == nil {
		return fmt.Errorf("the data flow names %s: no package %s; update bench/docgen/arch.go", sym, path)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, f := range p.GoFiles {
		af, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(files, af)
	}
	d, err := doc.NewFromFiles(fset, files, p.ImportPath)
	if err != nil {
		return err
	}
	typ, method, _ := strings.Cut(name, ".")
	if hasSymbol(d, typ, method) {
		return nil
	}
	return fmt.Errorf("the data flow names %s: not in package %s; update bench/docgen/arch.go", sym, path)
}

// hasSymbol reports whether d declares name (or the method method of the
// type name, when method is not empty).
func hasSymbol(d *doc.Package, name, method string) bool {
	valueHas := func(vs []*doc.Value) bool {
		for _, v := range vs {
			if slices.Contains(v.Names, name) {
				return true
			}
		}
		return false
	}
	funcHas := func(fs []*doc.Func, n string) bool {
		return slices.ContainsFunc(fs, func(f *doc.Func) bool { return f.Name == n })
	}
	if method == "" && (funcHas(d.Funcs, name) || valueHas(d.Vars) || valueHas(d.Consts)) {
		return true
	}
	for _, t := range d.Types {
		if t.Name != name {
			if method == "" && (funcHas(t.Funcs, name) || valueHas(t.Vars) || valueHas(t.Consts)) {
				return true
			}
			continue
		}
		return method == "" || funcHas(t.Methods, method)
	}
	return false
}
