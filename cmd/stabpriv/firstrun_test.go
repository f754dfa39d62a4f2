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

// TestHelpNamesMulticlassStump checks the help of train against the rule:
// three classes at a pure budget with declared bounds, far fewer features
// than rows, release the decision stump, and the help says where it does.
func TestHelpNamesMulticlassStump(t *testing.T) {
	setProgressAfter(t, quietRun)
	data := writeCSV(t, clusters(3, 40))
	out := filepath.Join(t.TempDir(), "m.json")
	stdout, stderr, err := call(t, "train", "--data", data, "--label", "class", "--classes", "c0,c1,c2", "--bounds-all", "-9,9", "--out", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.HasPrefix(stdout, "PRIVATE RELEASE: stump,") {
		t.Fatalf("the rule did not release the stump:\n%s", stdout)
	}
	help, _, err := call(t, "help", "train")
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(help), " ")
	for _, want := range []string{"for three to ten classes at a pure budget (no --delta) whatever the width", "for three to ten classes at a pure budget whatever the width"} {
		if !strings.Contains(flat, want) {
			t.Errorf("help train does not say %q", want)
		}
	}
}
