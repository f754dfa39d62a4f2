package runflags

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/release"
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
		{[]string{"--epsilon", "1"}, embedded, "--epsilon applies to a private release"},
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

// TestSGDFlagsFollowMethod checks, for every release method, that the
// flags of an SGD run are accepted when the method releases one
// (release.Method.SGD) and refused, naming the flag and the mechanism,
// when it does not.
func TestSGDFlagsFollowMethod(t *testing.T) {
	embedded := &datasets.Schema{Label: "y", Classes: []string{"a", "b"}}
	values := map[string][]string{
		"passes": {"3"}, "batch": {"2"}, "step": {"0.1", "--schedule", "constant"}, "schedule": {"constant"},
		"engine": {"native"}, "clip": {"0.5"}, "dropout": {"0.5"}, "radius": {"2"}, "average": nil,
		"partitions": {"2"}, "l1-ratio": {"0.1"},
	}
	for _, m := range release.Methods() {
		budget := []string{"--mechanism", string(m.Name()), "--epsilon", "0.5", "--lambda", "0.01", "--standardize", "none"}
		if !m.Pure() {
			budget = append(budget, "--delta", "1e-5")
		}
		for _, name := range sgdFlags {
			v, ok := values[name]
			if !ok {
				t.Fatalf("no test value for --%s", name)
			}
			args := append(append(slices.Clone(budget), "--"+name), v...)
			_, err := parse(t, args, embedded)
			switch {
			case m.SGD() && err != nil:
				t.Errorf("%q: %v, want it accepted (%s releases an SGD run)", args, err, m.Name())
			case !m.SGD() && (!errors.Is(err, ErrUsage) || !strings.Contains(fmt.Sprint(err), "--"+name+" does not apply to --mechanism "+string(m.Name()))):
				t.Errorf("%q: %v, want a usage error naming --%s and %s", args, err, name, m.Name())
			}
		}
	}
}
