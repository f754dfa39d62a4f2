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
	"github.com/stabpriv/stabpriv/selection"
	"github.com/stabpriv/stabpriv/trainer"
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
		{[]string{"--label", "y", "--mechanism", "laplace", "--epsilon", "1", "--classes", "a,b", "--bounds-share", "1"}, nil, "leaves nothing for the release"},
		{[]string{"--label", "y", "--mechanism", "laplace", "--epsilon", "1", "--classes", "a,b", "--bounds-share", "0"}, nil, "leaves nothing for the bounds estimate"},
		{[]string{"--label", "y", "--mechanism", "laplace", "--epsilon", "1", "--classes", "a,b", "--bounds-share", "NaN"}, nil, "want a share in (0, 1)"},
		{[]string{"--label", "y", "--mechanism", "none", "--classes", "a,b", "--bounds-share", "0.2"}, nil, "--bounds-share applies to a private release"},
		{[]string{"--label", "y", "--mechanism", "laplace", "--classes", "a,b", "--bounds-all", "0,1", "--bounds-share", "0.2"}, nil, "cost nothing"},
		{[]string{"--label", "y", "--mechanism", "laplace", "--classes", "a,b", "--standardize", "none", "--bounds-share", "0.2"}, nil, "drop --standardize none"},
		{[]string{"--label", "y", "--classes", "a,b", "--bounds-all", "0,1", "--bounds", "b.csv"}, nil, "exclude each other"},
		{[]string{"--label", "y", "--classes", "a,b", "--bounds-all", "1,0"}, nil, "--bounds-all"},
		{[]string{"--label", "y", "--classes", "a,b", "--bounds-all", "0"}, nil, "want lo,hi"},
		{[]string{"--label", "y", "--classes", "a,b", "--bounds-all", "0,1", "--standardize", "train"}, nil, "exclude each other"},
		{[]string{"--label", "y", "--mechanism", "laplace", "--classes", "a,b", "--partitions", "2"}, nil, "--partitions needs public bounds"},
		{[]string{"--label", "y", "--mechanism", "laplace", "--epsilon", "1", "--standardize", "none"}, nil, "--classes"},
		{[]string{"--label", "y", "--partitions", "2", "--standardize", "train", "--classes", "a,b"}, nil, "standardization fitted on the rows"},
		{[]string{"--log-level", "loud"}, embedded, "--log-level"},
		{[]string{"--epsilon", "1", "--partitions", "2", "--select", "holdout"}, embedded, "proven for a single fit"},
		{[]string{"--epsilon", "1", "--delta", "1e-5", "--partitions", "4", "--select", "random-stopping"}, embedded, "proven for a single fit"},
		{[]string{"--epsilon", "1", "--partitions", "2", "--batch", "2"}, embedded, "--batch: without --mechanism"},
		{[]string{"--epsilon", "1", "--privacy-id", "u", "--max-rows-per-id", "2", "--select", "holdout"}, embedded, "--select holdout with --privacy-id"},
		{[]string{"--epsilon", "1", "--privacy-id", "u", "--max-rows-per-id", "2", "--lambda", "0.1"}, embedded, "--lambda: without --mechanism"},
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
// choice of the setting, by the public rule unless --select names a
// private selection, and leaves the knobs to it.
func TestCheckSelect(t *testing.T) {
	bounded := &datasets.Schema{Label: "y", Classes: []string{"a", "b"}, Bounds: []datasets.Bound{{Column: "x", Lo: 0, Hi: 1}}}
	for _, tc := range []struct {
		args []string
		want selection.Method
	}{
		{[]string{"--epsilon", "0.5"}, selection.Rule},
		{[]string{"--epsilon", "0.5", "--select", "holdout"}, selection.Holdout},
		{[]string{"--epsilon", "0.5", "--delta", "1e-5", "--select", "random-stopping"}, selection.RandomStopping},
		// A partitioned fit takes the rule (partition.UseRule resolves it).
		{[]string{"--epsilon", "0.5", "--partitions", "4"}, selection.Rule},
		{[]string{"--epsilon", "0.5", "--delta", "1e-5", "--partitions", "4", "--select", "rule"}, selection.Rule},
		// One partition is a single fit, which runs any selection.
		{[]string{"--epsilon", "0.5", "--partitions", "1", "--select", "holdout"}, selection.Holdout},
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

// TestSGDFlagsFollowMethod checks, for every release method, that the
// flags of an SGD run are accepted when the method releases one
// (release.Method.SGD) or its own run takes them (release.TakesKnob:
// dp-sgd) and refused, naming the flag and the mechanism, when not.
func TestSGDFlagsFollowMethod(t *testing.T) {
	embedded := &datasets.Schema{Label: "y", Classes: []string{"a", "b"}}
	values := map[string][]string{
		"passes": {"3"}, "batch": {"2"}, "step": {"0.1", "--schedule", "constant"}, "schedule": {"constant"},
		"engine": {"native"}, "clip": {"0.5"}, "dropout": {"0.5"}, "radius": {"2"}, "average": nil,
		"partitions": {"2"}, "l1-ratio": {"0.1"}, "privacy-id": {"u", "--max-rows-per-id", "2"},
	}
	for _, m := range release.Methods() {
		budget := []string{"--mechanism", string(m.Name()), "--epsilon", "0.5", "--lambda", "0.01", "--standardize", "none"}
		if !m.Name().Pure() {
			budget = append(budget, "--delta", "1e-5")
		}
		for _, name := range sgdFlags {
			v, ok := values[name]
			if !ok {
				t.Fatalf("no test value for --%s", name)
			}
			args := append(append(slices.Clone(budget), "--"+name), v...)
			_, err := parse(t, args, embedded)
			takes := release.TakesKnob(m, release.Knob(name))
			switch {
			case takes && err != nil:
				t.Errorf("%q: %v, want it accepted (%s's run takes it)", args, err, m.Name())
			case !takes && (!errors.Is(err, ErrUsage) || !strings.Contains(fmt.Sprint(err), "--"+name+" does not apply to --mechanism "+string(m.Name()))):
				t.Errorf("%q: %v, want a usage error naming --%s and %s", args, err, name, m.Name())
			}
		}
	}
}

// TestKnobTakerAuto: with --lambda auto, dp-sgd's rule sets its knobs
// unless one of them is given; then the run takes the given ones.
func TestKnobTakerAuto(t *testing.T) {
	embedded := &datasets.Schema{Label: "y", Classes: []string{"a", "b"}}
	base := []string{"--mechanism", "dp-sgd", "--epsilon", "1", "--delta", "1e-6", "--standardize", "none"}
	for _, tt := range []struct {
		extra []string
		auto  bool
	}{{nil, true}, {[]string{"--batch", "64"}, false}, {[]string{"--average"}, false}, {[]string{"--clip", "0.5"}, false}} {
		r, err := parse(t, append(slices.Clone(base), tt.extra...), embedded)
		if err != nil || r.Options.Auto != tt.auto {
			t.Errorf("%v: auto %v (%v), want %v", tt.extra, r != nil && r.Options.Auto, err, tt.auto)
		}
	}
}

// TestCheckBounds checks where the bounds come from: --bounds-all for every
// column, an estimate with the default or a given share, and the embedded
// data's shipped bounds replaced by the estimate when a share is given.
func TestCheckBounds(t *testing.T) {
	r, err := parse(t, []string{"--label", "y", "--classes", "a,b", "--mechanism", "gamma", "--bounds-all", "-2, 5"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := r.Schema.Bound("anything"); !ok || b.Lo != -2 || b.Hi != 5 || r.Options.BoundsShare != 0 {
		t.Errorf("--bounds-all: bound %v %v, share %v", b, ok, r.Options.BoundsShare)
	}
	r, err = parse(t, []string{"--label", "y", "--classes", "a,b", "--mechanism", "gamma"}, nil)
	if err != nil || r.Schema.Declared() || r.Options.BoundsShare != 0 {
		t.Errorf("no bounds: %v, declared %v, share %v (0: the default)", err, r.Schema.Declared(), r.Options.BoundsShare)
	}
	embedded := &datasets.Schema{Label: "y", Classes: []string{"a", "b"}, Bounds: []datasets.Bound{{Column: "x", Lo: 0, Hi: 1}}}
	r, err = parse(t, []string{"--mechanism", "gamma", "--bounds-share", "0.25"}, embedded)
	if err != nil || r.Schema.Declared() || r.Options.BoundsShare != 0.25 {
		t.Errorf("embedded with a share: %v, declared %v, share %v", err, r.Schema.Declared(), r.Options.BoundsShare)
	}
	r, err = parse(t, []string{"--mechanism", "gamma"}, embedded)
	if err != nil || len(r.Schema.Bounds) != 1 {
		t.Errorf("embedded: %v, bounds %v (the shipped ones)", err, r.Schema.Bounds)
	}
}

// TestCheckPrivacyID checks --privacy-id and --max-rows-per-id: accepted
// together, with a mechanism or by the public rule (no --mechanism), and
// refused alone, with c < 1 or with a private selection.
func TestCheckPrivacyID(t *testing.T) {
	base := []string{"--label", "y", "--classes", "a,b", "--standardize", "none"}
	r, err := parse(t, append(slices.Clone(base), "--mechanism", "gamma", "--epsilon", "1", "--privacy-id", "user", "--max-rows-per-id", "3"), nil)
	if err != nil || r.Options.PrivacyID != "user" || r.Options.MaxRowsPerID != 3 {
		t.Fatalf("options %+v, %v", r, err)
	}
	r, err = parse(t, append(slices.Clone(base), "--epsilon", "1", "--privacy-id", "user", "--max-rows-per-id", "3"), nil)
	if err != nil || r.Options.PrivacyID != "user" || r.Options.MaxRowsPerID != 3 || r.Options.Select == nil || !r.Options.Select.Method.IsRule() || r.Options.Mechanism != "" {
		t.Fatalf("the rule per privacy ID: options %+v, %v", r, err)
	}
	for _, args := range [][]string{
		{"--mechanism", "gamma", "--epsilon", "1", "--privacy-id", "user"},
		{"--mechanism", "gamma", "--epsilon", "1", "--max-rows-per-id", "3"},
		{"--mechanism", "gamma", "--epsilon", "1", "--privacy-id", "user", "--max-rows-per-id", "0"},
		{"--mechanism", "gamma", "--epsilon", "1", "--privacy-id", "user", "--max-rows-per-id", "-2"},
		{"--mechanism", "gamma", "--epsilon", "1", "--privacy-id", "", "--max-rows-per-id", "2"},
		{"--epsilon", "1", "--privacy-id", "user", "--max-rows-per-id", "2", "--select", "random-stopping"},
	} {
		args = append(slices.Clone(base), args...)
		if _, err := parse(t, args, nil); !errors.Is(err, ErrUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

// TestCheckEngine checks that --engine graph is refused, as a usage error
// that names the build tag, exactly when the command links no Gorgonia
// engine.
func TestCheckEngine(t *testing.T) {
	for _, c := range []struct {
		engine      trainer.Engine
		graphLinked bool
		refused     bool
	}{
		{trainer.Graph, false, true},
		{trainer.Graph, true, false},
		{trainer.Native, false, false},
		{trainer.Native, true, false},
	} {
		f := Flags{Engine: c.engine}
		err := f.CheckEngine(c.graphLinked)
		var ue *UsageError
		if c.refused != (err != nil) || (err != nil && (!errors.As(err, &ue) || !strings.Contains(err.Error(), "-tags graph"))) {
			t.Errorf("engine %v, graph linked %v: err = %v", c.engine, c.graphLinked, err)
		}
	}
}
