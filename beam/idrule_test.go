package stabbeam

import (
	"context"
	"flag"
	"io"
	"math"
	"path/filepath"
	"testing"

	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/partition"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release/autoknobs"
)

// TestPipelinePrivacyIDRule runs the pipeline per privacy ID by the public
// rule (--privacy-id user --max-rows-per-id 3 --epsilon 1, no
// --mechanism, the flags parsed as stabpriv-beam parses them): it releases
// the weights and certificate of the in-process fit `stabpriv train`
// runs with the same flags, gamma noise at the ID's sensitivity, with
// lambda sqrt(3) times the automatic lambda for rows.
func TestPipelinePrivacyIDRule(t *testing.T) {
	dir := t.TempDir()
	glob := writeIDShards(t, dir, "a", 3, nil)
	var f runflags.Flags
	fs := flag.NewFlagSet("stabpriv-beam", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.Register(fs)
	if err := fs.Parse([]string{"--label", "y", "--classes", "neg,pos", "--bounds-all", "-4,4", "--partitions", "2", "--seed", "3",
		"--privacy-id", "user", "--max-rows-per-id", "3", "--epsilon", "1", "--noise", "seeded", "--noise-seed", "9"}); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	run, err := f.Check(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := NewConfig(run.Schema, run.Budget, run.Options, f.Partitions)
	if err != nil {
		t.Fatal(err)
	}
	got := pipelineFile(t, cfg, glob, filepath.Join(dir, "rule.json"))
	tables, err := placement.ReadShards(glob, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := partition.Fit(context.Background(), tables, run.Schema, run.Budget, run.Options, f.Partitions)
	if err != nil {
		t.Fatal(err)
	}
	sameRelease(t, "the rule per privacy ID, pipeline against train", got, want)
	checkClaim(t, "the rule per privacy ID", got)
	c := got.Certificate
	k, err := autoknobs.Choose(c.Run.N, c.Run.D, 1, perturb.Gamma, run.Budget)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mechanism != perturb.Gamma || got.Partitions.MaxRowsPerID != 3 || c.Lambda != k.Lambda*math.Sqrt(3) {
		t.Errorf("mechanism %s, c = %d, lambda %v; want gamma, 3, sqrt(3) x %v", c.Mechanism, got.Partitions.MaxRowsPerID, c.Lambda, k.Lambda)
	}
}
