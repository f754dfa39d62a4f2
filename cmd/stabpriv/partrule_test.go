package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
)

// writeShardDir writes the rows of clusters(2, 40) into three CSV shards
// under a new directory and returns it.
func writeShardDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	lines := strings.SplitAfter(clusters(2, 40), "\n")
	header, rows := lines[0], lines[1:len(lines)-1]
	for s := range 3 {
		b := header + strings.Join(rows[s*len(rows)/3:(s+1)*len(rows)/3], "")
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("shard%d.csv", s)), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCLIPartitionedRule: train --partitions with a budget and no
// --mechanism releases by the public rule of a partitioned fit, the model
// file byte for byte that naming its mechanism gives (gamma for a pure
// budget, the analytic Gaussian with --delta), and the file certifies; a
// private selection with partitions is refused, saying why.
func TestCLIPartitionedRule(t *testing.T) {
	dir := writeShardDir(t)
	glob := filepath.Join(dir, "shard*.csv")
	bounds := writeFile(t, "bounds.csv", "x1,-6,6\nx2,-6,6\n")
	base := []string{"train", "--data", glob, "--label", "class", "--classes", "c0,c1", "--bounds", bounds, "--partitions", "4", "--seed", "2"}
	model := func(name string, extra ...string) string {
		t.Helper()
		out := filepath.Join(dir, "out", name+".json")
		if _, stderr, err := call(t, append(append(append([]string{}, base...), "--out", out), extra...)...); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	seeded := []string{"--noise", "seeded", "--noise-seed", "5"}
	for _, c := range []struct {
		budget []string
		want   dp.Mechanism
	}{
		{[]string{"--epsilon", "1"}, perturb.Gamma},
		{[]string{"--epsilon", "0.5", "--delta", "1e-5"}, perturb.AnalyticGaussian},
	} {
		name := string(c.want)
		rule := model(name+"-rule", append(c.budget, seeded...)...)
		named := model(name+"-named", append(append(c.budget, seeded...), "--mechanism", string(c.want))...)
		if rule != named {
			t.Errorf("%v: the rule's model file differs from --mechanism %s's", c.budget, c.want)
		}
		if !strings.Contains(rule, `"mechanism": "`+string(c.want)+`"`) {
			t.Errorf("%v: the rule's model file does not name %s", c.budget, c.want)
		}
		secure := filepath.Join(dir, "out", name+"-secure.json")
		model(name+"-secure", c.budget...)
		if stdout, _, err := call(t, "certify", secure); err != nil || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
			t.Errorf("%v: certify of the rule's release: %v\n%s", c.budget, err, stdout)
		}
	}
	for _, sel := range []string{"holdout", "random-stopping"} {
		out := filepath.Join(dir, "out", sel+".json")
		_, _, err := call(t, append(append([]string{}, base...), "--epsilon", "1", "--select", sel, "--out", out)...)
		if exitCode(err) != 2 || !strings.Contains(fmt.Sprint(err), "proven for a single fit") {
			t.Errorf("--select %s with --partitions: %v, want exit 2 saying why", sel, err)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("--select %s: a model file was written", sel)
		}
	}
}
