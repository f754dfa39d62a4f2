package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func twoClass(name string) dataSet { return dataSet{name: name, classes: []string{"a", "b"}} }

func TestGap(t *testing.T) {
	for _, c := range []struct{ acc, maj, np, want float64 }{
		{0.8, 0.6, 1, 0.5}, {0.6, 0.6, 0.9, 0}, {0.5, 0.6, 0.8, -0.5},
	} {
		if got := gap(c.acc, c.maj, c.np); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("gap(%g, %g, %g) = %g, want %g", c.acc, c.maj, c.np, got, c.want)
		}
	}
	if !math.IsNaN(gap(0.7, 0.7, 0.7)) || !strings.Contains(gapCell(0.7, 0.7, 0.6), "not above") {
		t.Errorf("a non-private fit not above the majority has no gap")
	}
}

// TestTargets27: refusals on a table of at least minRows rows, releases
// that do not certify and a gap below the target are all reported.
func TestTargets27(t *testing.T) {
	row := func(set, rows, eps, delta, variant, seed, acc, maj, cert, errMsg string) map[string]string {
		return map[string]string{"dataset": set, "rows": rows, "epsilon": eps, "delta": delta, "variant": variant, "seed": seed,
			"accuracy": acc, "majority": maj, "certified": cert, "error": errMsg}
	}
	rule := variants[0].name
	all := []map[string]string{
		row("A", "600", "0", "0", nonPrivate, "1", "0.9", "0.5", "", ""),
		row("A", "600", "1", "0", rule, "1", "0.6", "0.5", "ok", ""),
		row("A", "600", "1", "0", rule, "2", "", "", "", "refused"),
		row("A", "600", "1", "0", variants[1].name, "1", "0.8", "0.5", "modelfile: bad", ""),
		// B closes 49.8% of its gap: not the 50% its rounding would show.
		row("B", "600", "0", "0", nonPrivate, "1", "0.9", "0.5", "", ""),
		row("B", "600", "1", "0", rule, "1", "0.6992", "0.5", "ok", ""),
	}
	md := targets27(all, nil, []dataSet{twoClass("A"), twoClass("B")}, 1)
	for _, want := range []string{"25% (not met: target 50%)", "49.8% (not met: target 50%)", "not met (A (600 rows): 1)", "Every release certifies: 2 of 3", "not run"} {
		if !strings.Contains(md, want) {
			t.Errorf("targets.md lacks %q:\n%s", want, md)
		}
	}
}

// TestCheckTable: a label that is not a declared class, and an ignored
// column that is not in the header, are errors; NA labels are null rows.
func TestCheckTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(path, []byte("\"id\",\"x\",\"y\"\n1,2.5,\"a\"\n2,NA,NA\n3,4,\"b\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, cols, missing, err := checkTable(path, "y", []string{"a", "b"}, []string{"id"})
	if err != nil || rows != 3 || cols != 3 || missing != 2 {
		t.Errorf("checkTable = %d rows, %d columns, %d missing, %v; want 3, 3, 2, nil", rows, cols, missing, err)
	}
	if _, _, _, err := checkTable(path, "y", []string{"a"}, nil); err == nil || !strings.Contains(err.Error(), `label "b"`) {
		t.Errorf("an undeclared label: %v", err)
	}
	if _, _, _, err := checkTable(path, "y", []string{"a", "b"}, []string{"ID"}); err == nil || !strings.Contains(err.Error(), `"ID"`) {
		t.Errorf("a missing ignored column: %v", err)
	}
}
