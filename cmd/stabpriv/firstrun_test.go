package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestCentresWarningGivesItsReason is a first run without declared bounds
// on 2,600 rows of two columns, enough for the feature ranges (2,514 at the
// default share): the warning about the estimated centres gives the default
// method as the reason, not too few rows, which the row count contradicts.
func TestCentresWarningGivesItsReason(t *testing.T) {
	_, stderr := firstRun(t, 2, 1300)
	if !strings.Contains(stderr, "no bounds declared for 2 columns (2600 training rows)") || strings.Contains(stderr, "too few") {
		t.Errorf("the centres' warning does not give the default method as its reason:\n%s", stderr)
	}
	checkShortWarnings(t, stderr)
}

// TestPublicMapWarningIsShort is a first run on a small table (120 rows,
// too few for any feature scale): its one warning names the public map and
// what to do, in a line a terminal shows whole.
func TestPublicMapWarningIsShort(t *testing.T) {
	_, stderr := firstRun(t, 2, 60)
	if !strings.Contains(stderr, "public log scale") || !strings.Contains(stderr, "declare --bounds") {
		t.Errorf("the warning does not name the public map and the remedy:\n%s", stderr)
	}
	checkShortWarnings(t, stderr)
}

// firstRun runs train quietly on clusters(k, perClass), label class
// and classes c0, c1, ..., with the flags args, and returns its stdout and
// stderr; an error fails the test.
func firstRun(t *testing.T, k, perClass int, args ...string) (stdout, stderr string) {
	t.Helper()
	setProgressAfter(t, quietRun)
	classes := make([]string, k)
	for i := range classes {
		classes[i] = fmt.Sprintf("c%d", i)
	}
	args = append([]string{"train", "--data", writeCSV(t, clusters(k, perClass)), "--label", "class", "--classes", strings.Join(classes, ","),
		"--out", filepath.Join(t.TempDir(), "m.json")}, args...)
	stdout, stderr, err := call(t, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	return stdout, stderr
}

// checkShortWarnings fails the test when a line of stderr has a message
// longer than 300 characters.
func checkShortWarnings(t *testing.T, stderr string) {
	t.Helper()
	for line := range strings.Lines(stderr) {
		if i := strings.Index(line, `msg="`); i >= 0 {
			msg, _, _ := strings.Cut(line[i+5:], `"`)
			if len(msg) > 300 {
				t.Errorf("a warning of %d characters:\n%s", len(msg), msg)
			}
		}
	}
}

// TestHelpNamesMulticlassStump checks the help of train against the rule:
// three classes at a pure budget with declared bounds, far fewer features
// than rows, release the decision stump, and the help says where it does.
func TestHelpNamesMulticlassStump(t *testing.T) {
	stdout, _ := firstRun(t, 3, 40, "--bounds-all", "-9,9")
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

// TestHoldoutSkipSaysSo is a holdout selection on 120 rows at eps = 1,
// too few to tune: the summary says the tuning was skipped, not that a
// setting was chosen among the candidates.
func TestHoldoutSkipSaysSo(t *testing.T) {
	stdout, _ := firstRun(t, 3, 40, "--bounds-all", "-9,9", "--epsilon", "1", "--select", "holdout")
	if !strings.Contains(stdout, "holdout: tuning skipped") || strings.Contains(stdout, "tuned on 0 rows") {
		t.Errorf("the summary does not say the tuning was skipped:\n%s", stdout)
	}
}

// TestHelpListsFlags checks that the help of every command with flags
// lists them, certify's --model and --log-level among them.
func TestHelpListsFlags(t *testing.T) {
	for _, cmd := range []string{"train", "certify", "predict", "sweep", "featsel", "pdp", "account"} {
		stdout, stderr, err := call(t, "help", cmd)
		help := stdout + stderr
		if err != nil || !strings.Contains(help, "\nFlags:\n  -") {
			t.Errorf("help %s lists no flags: %v\n%s", cmd, err, help)
		}
	}
	stdout, stderr, _ := call(t, "help", "certify")
	for _, flag := range []string{"  -model file\n", "  -log-level string\n"} {
		if !strings.Contains(stdout+stderr, flag) {
			t.Errorf("help certify does not list %q", flag)
		}
	}
}
