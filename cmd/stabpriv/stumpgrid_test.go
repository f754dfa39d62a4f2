package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
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
