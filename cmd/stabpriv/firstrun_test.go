package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCentresWarningGivesItsReason is a first run without declared bounds
// on 2,600 rows of two columns, enough for the feature ranges (2,514 at the
// default share): the warning about the estimated centres gives the default
// method as the reason, not too few rows, which the row count contradicts.
func TestCentresWarningGivesItsReason(t *testing.T) {
	setProgressAfter(t, quietRun)
	data := writeCSV(t, clusters(2, 1300))
	out := filepath.Join(t.TempDir(), "m.json")
	_, stderr, err := call(t, "train", "--data", data, "--label", "class", "--classes", "c0,c1", "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "no bounds declared for 2 columns (2600 training rows)") || strings.Contains(stderr, "too few") {
		t.Errorf("the centres' warning does not give the default method as its reason:\n%s", stderr)
	}
}
