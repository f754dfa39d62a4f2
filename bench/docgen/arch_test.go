package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArchitectureCurrent regenerates docs/ARCHITECTURE.md from go list
// and fails, naming the first line that differs, when the file is stale.
func TestArchitectureCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	want, err := archText(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatalf("%v: run make arch", err)
	}
	if string(got) == want {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Fatalf("docs/ARCHITECTURE.md is stale: run make arch (line %d is %q, want %q)", i+1, gl, wl)
		}
	}
}

// TestArchSymbols checks that a data flow naming a package or a function
// that does not exist is refused, and that every form of name is found.
func TestArchSymbols(t *testing.T) {
	pkgs, err := listPackages(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for sym, ok := range map[string]bool{
		"datasets.ReadTable":              true,  // a function
		"datasets.Table":                  true,  // a type
		"datasets.Table.Encode":           true,  // a method
		"datasets.ErrFormat":              true,  // a variable
		"datasets.MaxRows":                true,  // a constant
		"datasets/preprocess.NewRowMap":   true,  // a constructor, under its type
		"datasets.Table.NoSuchMethod":     false, // gone
		"datasets.NoSuchFunction":         false,
		"nosuchpackage.Fit":               false,
		"datasets/preprocess.RowMap.Rows": true,
	} {
		if err := checkSymbol(pkgs, sym); (err == nil) != ok {
			t.Errorf("checkSymbol(%s): %v, want found %v", sym, err, ok)
		}
	}
	if got := namedIn(pkgs, "the mechanism (release.Lookup), rebuilt (modelfile.Verify); Table.Encode"); strings.Join(got, " ") != "release.Lookup modelfile.Verify" {
		t.Errorf("namedIn = %q", got)
	}
}

// TestLayers checks the layer of a package: one above the highest of its
// project imports, 0 without any.
func TestLayers(t *testing.T) {
	pkgs, err := listPackages(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		want := 0
		for _, d := range p.Deps {
			want = max(want, pkgs[d].Layer+1)
		}
		if p.Layer != want {
			t.Errorf("%s: layer %d, want %d (imports %v)", p.Path, p.Layer, want, p.Deps)
		}
	}
}
