package stabbeam

import (
	"context"
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/partition"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/selection"
)

// TestPipelineRule runs the pipeline by the public rule of a partitioned
// fit (a budget without --mechanism, the flags parsed as stabpriv-beam and
// stabpriv train parse them) and checks that it releases the weights and
// certificate of the in-process fit that `stabpriv train --partitions`
// runs with the same flags (partition.Fit with the rule), and of the
// pipeline that names the rule's mechanism with the automatic knobs: gamma
// for a pure budget, the analytic Gaussian with --delta.
func TestPipelineRule(t *testing.T) {
	dir := t.TempDir()
	glob := writeShards(t, dir, 3, 200, 3, 5)
	tables, err := placement.ReadShards(glob, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want dp.Mechanism
	}{
		{"pure", []string{"--epsilon", "1"}, perturb.Gamma},
		{"delta", []string{"--epsilon", "0.5", "--delta", "1e-5"}, perturb.AnalyticGaussian},
	} {
		var f runflags.Flags
		fs := flag.NewFlagSet("stabpriv-beam", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f.Register(fs)
		args := append([]string{"--label", "y", "--classes", "neg,pos", "--bounds-all", "-3,5", "--partitions", "4", "--seed", "3",
			"--noise", "seeded", "--noise-seed", "9"}, c.args...)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		set := map[string]bool{}
		fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
		run, err := f.Check(set, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if run.Options.Select == nil || run.Options.Mechanism != "" {
			t.Fatalf("%s: options %+v, want the rule", c.name, run.Options)
		}
		cfg, err := NewConfig(run.Schema, run.Budget, run.Options, f.Partitions)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if cfg.Mechanism != string(c.want) || !cfg.Auto {
			t.Fatalf("%s: the rule travels as mechanism %q, auto %v; want %s, auto", c.name, cfg.Mechanism, cfg.Auto, c.want)
		}
		got := pipelineFile(t, cfg, glob, filepath.Join(dir, c.name+".json"))
		// What stabpriv train --partitions runs with the same flags.
		want, err := partition.Fit(context.Background(), tables, run.Schema, run.Budget, run.Options, f.Partitions)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sameRelease(t, c.name+": the rule, pipeline against train --partitions", got, want)
		if got.Certificate.Mechanism != c.want {
			t.Errorf("%s: released by %s, want %s", c.name, got.Certificate.Mechanism, c.want)
		}
		// Naming the mechanism (with the automatic knobs) releases the same.
		named := run.Options
		named.Select, named.Mechanism, named.Auto = nil, c.want, true
		ncfg, err := NewConfig(run.Schema, run.Budget, named, f.Partitions)
		if err != nil {
			t.Fatal(err)
		}
		sameRelease(t, c.name+": the rule against --mechanism "+string(c.want), got, pipelineFile(t, ncfg, glob, filepath.Join(dir, c.name+"-named.json")))
		checkClaim(t, c.name, got)
	}
	// A private selection does not travel: it is proven for a single fit.
	schema := datasets.Schema{Label: "y", Classes: []string{"neg", "pos"}, All: &datasets.Bound{Lo: -3, Hi: 5}}
	_, budget, opts, err := testConfig(0, 4).Options()
	if err != nil {
		t.Fatal(err)
	}
	opts.Mechanism, opts.Auto = "", false
	for _, m := range selection.Methods() {
		o := opts
		o.Select = &selection.Config{Method: m}
		if _, err := NewConfig(schema, budget, o, 4); err == nil || !strings.Contains(err.Error(), "proven for a single fit") {
			t.Errorf("%s: %v, want a refusal naming why", m, err)
		}
	}
}
