package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIStumpMixedSummary trains --mechanism stump through the command
// line on a table with a numeric column (x, bounds [0, 10]) and a
// categorical one (colour, declared red, green, blue) whose label is "yes"
// exactly for the red rows: the summary's stump line must name a column
// (the numeric one with its threshold in its units, or a colour category),
// never a bare mapped input. At eps = 4 over 200 rows the red indicator
// scores 200 against at most about 133 for any other stump, so it is
// chosen with overwhelming probability; the check does not depend on it.
func TestCLIStumpMixedSummary(t *testing.T) {
	var b strings.Builder
	b.WriteString("x,colour,y\n")
	colours := []string{"red", "green", "blue"}
	for i := range 200 {
		c := colours[i%3]
		y := "no"
		if c == "red" {
			y = "yes"
		}
		fmt.Fprintf(&b, "%d,%s,%s\n", i%11, c, y)
	}
	data := writeFile(t, "mixed.csv", b.String())
	bounds := writeFile(t, "bounds.csv", "column,lo,hi\nx,0,10\n")
	schema := writeFile(t, "cats.csv", "colour,red,green,blue\n")
	out := filepath.Join(t.TempDir(), "m.json")
	stdout, stderr, err := call(t, "train", "--data", data, "--label", "y", "--classes", "no,yes", "--bounds", bounds, "--schema", schema,
		"--mechanism", "stump", "--epsilon", "4", "--test-frac", "0", "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var line string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "stump ") {
			line = l
		}
	}
	t.Log(line)
	if line == "" || strings.Contains(line, "mapped input") || !strings.Contains(line, `column "colour"`) && !strings.Contains(line, `feature "x"`) {
		t.Errorf("the stump line does not name a column:\n%s", stdout)
	}
}
