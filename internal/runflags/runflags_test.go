package runflags

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/selection"
)

// parse registers the flags on a fresh set, parses args and checks them.
func parse(t *testing.T, args []string, defaults *datasets.Schema) (*Run, error) {
	t.Helper()
	var f Flags
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	set := make(map[string]bool)
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return f.Check(set, defaults)
}

func TestCheckRefuses(t *testing.T) {
	embedded := &datasets.Schema{Label: "y", Classes: []string{"a", "b"}}
	for _, tc := range []struct {
		args     []string
		defaults *datasets.Schema
		want     string
	}{
		{[]string{"--mechanism", "none", "--epsilon", "1"}, embedded, "--epsilon applies to a private release"},
		{[]string{"--epsilon", "1", "--lambda", "0.1"}, embedded, "--lambda: without --mechanism"},
		{[]string{"--epsilon", "1", "--clip", "0.1"}, embedded, "--clip: without --mechanism"},
		{[]string{"--epsilon", "1", "--select", "stability"}, embedded, "--select \"stability\""},
		{[]string{"--select", "holdout"}, embedded, "--select applies"},
		{[]string{"--mechanism", "gamma", "--epsilon", "1", "--select", "holdout"}, embedded, "--select applies"},
		{[]string{"--epsilon", "1", "--delta", "1"}, embedded, "delta = 1"},
		{[]string{"--epsilon", "-1"}, embedded, "eps = -1"},
		{[]string{"--mechanism", "laplace", "--epsilon", "0"}, embedded, "--epsilon"},
		{[]string{"--mechanism", "laplace", "--epsilon", "1", "--delta", "1e-5"}, embedded, "leave --delta at 0"},
		{[]string{"--mechanism", "gaussian", "--epsilon", "2", "--delta", "1e-5"}, embedded, "gaussian-analytic"},
		{[]string{"--mechanism", "objective", "--epsilon", "1", "--passes", "3"}, embedded, "--passes does not apply"},
		{[]string{"--mechanism", "laplace", "--epsilon", "1", "--noise", "seeded"}, embedded, "--noise-seed N"},
		{[]string{"--classes", "a,b"}, embedded, "--classes applies to --data"},
		{[]string{"--label", "z"}, embedded, "embedded data set's label is y"},
		{nil, nil, "--label is required"},
		{[]string{"--label", "y", "--mechanism", "laplace", "--epsilon", "1", "--classes", "a,b"}, nil, "needs --bounds FILE"},
		{[]string{"--label", "y", "--mechanism", "laplace", "--epsilon", "1", "--standardize", "none"}, nil, "--classes"},
		{[]string{"--label", "y", "--partitions", "2", "--standardize", "train", "--classes", "a,b"}, nil, "standardization fitted on the rows"},
		{[]string{"--log-level", "loud"}, embedded, "--log-level"},
	} {
		_, err := parse(t, tc.args, tc.defaults)
		if err == nil {
			t.Errorf("%q: no error, want one containing %q", tc.args, tc.want)
			continue
		}
		if !errors.Is(err, ErrUsage) {
			t.Errorf("%q: error %v does not wrap ErrUsage", tc.args, err)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %q, want it to contain %q", tc.args, err, tc.want)
		}
	}
}

// TestCheckSelect: --epsilon without --mechanism asks for a private
// selection of the setting, by holdout unless --select says otherwise, and
// leaves the knobs to it.
func TestCheckSelect(t *testing.T) {
	bounded := &datasets.Schema{Label: "y", Classes: []string{"a", "b"}, Bounds: []datasets.Bound{{Column: "x", Lo: 0, Hi: 1}}}
	for _, tc := range []struct {
		args []string
		want selection.Method
	}{
		{[]string{"--epsilon", "0.5"}, selection.Holdout},
		{[]string{"--epsilon", "0.5", "--delta", "1e-5", "--select", "random-stopping"}, selection.RandomStopping},
	} {
		r, err := parse(t, tc.args, bounded)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if !r.Private() || r.Options.Select == nil || r.Options.Select.Method != tc.want || r.Options.Mechanism != "" || r.Options.Auto {
			t.Errorf("%q: options %+v, want a %s selection and no mechanism", tc.args, r.Options, tc.want)
		}
		if cfg := r.Options.Trainer; cfg.Reg.Lambda != 0 || cfg.Clip != 0 {
			t.Errorf("%q: lambda %v, clip %v, want 0 (chosen by the selection)", tc.args, cfg.Reg.Lambda, cfg.Clip)
		}
	}
}

func TestCheckAccepts(t *testing.T) {
	r, err := parse(t, []string{"--label", "y", "--classes", "a, b", "--mechanism", "gaussian-analytic", "--epsilon", "2", "--delta", "1e-6", "--standardize", "none"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Private() || r.Budget.Epsilon != 2 || r.Budget.Delta != 1e-6 {
		t.Errorf("run %+v: want a private run with eps 2, delta 1e-6", r)
	}
	if got := strings.Join(r.Schema.Classes, "|"); got != "a|b" {
		t.Errorf("classes %q, want a|b (spaces trimmed)", got)
	}
}
