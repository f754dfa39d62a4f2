package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/modelfile"
)

// TestCLIStumpFineGrid: on a balanced two-class table too small for a
// private feature scale (the public log map) whose columns lie within a
// factor two (heights 150 to 200, hand spans 13 to 23, as MASS's student
// survey), the rule's stump splits a column and beats chance on the rows
// by far. On the earlier grid of 63 thresholds (a factor two apart on the
// public log map) every row fell between the same two thresholds, the
// stump could split nothing and released a constant: half the rows.
func TestCLIStumpFineGrid(t *testing.T) {
	var b strings.Builder
	b.WriteString("height,span,sex\n")
	const n = 200
	for i := range n {
		h := 150 + 50*float64(i)/n
		sex := "f"
		if h > 175 != (i%10 == 0) { // one row in ten on the other side
			sex = "m"
		}
		fmt.Fprintf(&b, "%.1f,%.1f,%s\n", h, 13+float64(i*7%100)/10, sex)
	}
	data := writeCSV(t, b.String())
	out := filepath.Join(t.TempDir(), "m.json")
	stdout, stderr, err := call(t, "train", "--data", data, "--label", "sex", "--classes", "f,m", "--epsilon", "1", "--noise", "seeded", "--noise-seed", "3", "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, ": stump") {
		t.Errorf("the rule did not release a stump:\n%s", stdout)
	}
	if _, _, err := call(t, "certify", out); exitCode(err) != 3 {
		t.Errorf("certify a seeded stump: %v, want exit 3 (consistent, not private)", err)
	}
	_, stderr, err = call(t, "predict", "--model", out, "--data", data)
	if err != nil {
		t.Fatalf("predict: %v\n%s", err, stderr)
	}
	head := fmt.Sprintf("accuracy on the %d rows with a usable label: ", n)
	var acc float64
	if i := strings.Index(stderr, head); i < 0 {
		t.Fatalf("predict reports no accuracy: %s", stderr)
	} else if _, err := fmt.Sscan(stderr[i+len(head):], &acc); err != nil || acc < 0.8 {
		t.Errorf("the stump's accuracy %v (%v), want >= 0.8 (the best stump 0.9, a constant 0.5)", acc, err)
	}
}

// TestCLIMultiStumpPure: with declared bounds (no public log map) and
// fewer features than rows, the rule releases the multiclass stump at a
// pure budget (selection.MultiStumpFirst) and a linear mechanism with a
// delta; the choice reads public values only, so a neighbouring table
// (one row replaced by an extreme row of another class) gets the same
// mechanism, and the stump's release verifies.
func TestCLIMultiStumpPure(t *testing.T) {
	base := clusters(3, 60)
	lines := strings.Split(strings.TrimSuffix(base, "\n"), "\n")
	lines[1] = "1e6,-1e6,c2" // the neighbour: row 0 replaced
	neighbour := strings.Join(lines, "\n") + "\n"
	dir := t.TempDir()
	for i, c := range []struct {
		data  string
		delta []string
		stump bool
	}{{base, nil, true}, {neighbour, nil, true}, {base, []string{"--delta", "1e-5"}, false}, {neighbour, []string{"--delta", "1e-5"}, false}} {
		out := filepath.Join(dir, fmt.Sprint(i, ".json"))
		args := append([]string{"train", "--data", writeCSV(t, c.data), "--label", "class", "--classes", "c0,c1,c2", "--bounds-all", "-8,8", "--epsilon", "1", "--noise", "seeded", "--noise-seed", "2", "--out", out}, c.delta...)
		stdout, stderr, err := call(t, args...)
		if err != nil {
			t.Fatalf("%d: %v\n%s", i, err, stderr)
		}
		if got := strings.Contains(stdout, ": stump"); got != c.stump {
			t.Errorf("%d (delta %v): a stump %v, want %v:\n%.400s", i, c.delta, got, c.stump, stdout)
		}
		if _, _, err := call(t, "certify", out); exitCode(err) != 3 {
			t.Errorf("%d: certify a seeded release: %v, want exit 3 (consistent, not private)", i, err)
		}
	}
}

// TestCLIStumpLegacyFile certifies a binary stump written before the grid
// of 1023 thresholds (testdata/older/stump-grid63-v2.json: a secure
// release of the grid of 63 by the build before stump.DefaultGrid changed,
// train --data D --label class --classes c0,c1 --mechanism stump
// --bounds-all -8,8 --seed 3 on 40 rows of two columns): it verifies as a
// private release, and its threshold moved to a point of the new grid that
// is not on the old one (the weights' hash recomputed, as a forger would)
// is refused naming the grid, since the certificate names the grid of 63.
func TestCLIStumpLegacyFile(t *testing.T) {
	older := filepath.Join("testdata", "older", "stump-grid63-v2.json")
	err := certifyOlderForged(t, older, func(r *modelfile.Released) {
		if !strings.Contains(strings.Join(r.Certificate.Assumptions, "\n"), "the 63 thresholds") {
			t.Fatal("the legacy file does not name the grid of 63")
		}
		w := r.Model.W
		w[len(w)-1] += 1.0 / 512 // a multiple of 1/512, not of 1/32
	})
	if exitCode(err) != 5 || !strings.Contains(fmt.Sprint(err), "grid of 63") {
		t.Errorf("a legacy stump moved off its grid: exit %d (%v), want 5 naming the grid of 63", exitCode(err), err)
	}
}
