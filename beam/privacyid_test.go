package stabbeam

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/stabpriv/stabpriv/modelfile"
)

// writeIDShards writes k shards of columns f0, user, f1, y under dir/sub:
// 30 users with 1 to 7 rows each, spread over the shards in a seeded
// order, and returns their glob. The rows of user u4 are replaced by u4
// when it is not nil.
func writeIDShards(t *testing.T, dir, sub string, k int, u4 []string) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(6, 3))
	shards := make([][]string, k)
	for u := range 30 {
		for range 1 + rng.IntN(7) {
			c := rng.IntN(2)
			row := fmt.Sprintf("%g,u%d,%g,%s\n", 2*float64(2*c-1)+rng.NormFloat64(), u, rng.NormFloat64(), []string{"neg", "pos"}[c])
			sh := rng.IntN(k)
			if u == 4 && u4 != nil {
				continue
			}
			shards[sh] = append(shards[sh], row)
		}
	}
	for i, r := range u4 {
		shards[i%k] = append([]string{r}, shards[i%k]...)
	}
	d := filepath.Join(dir, sub)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, rows := range shards {
		text := "f0,user,f1,y\n" + strings.Join(rows, "")
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("part-%d.csv", i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(d, "part-*.csv")
}

// TestPipelinePrivacyID runs the pipeline per privacy ID (the ID's rows
// grouped, c kept and padded, trained in the ID's partition): its model
// file equals the in-process partition.Fit's bit for bit and verifies, and
// shards that differ in every row of one user give weights within the
// certified Delta.
func TestPipelinePrivacyID(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(2, 3)
	cfg.PrivacyID, cfg.MaxRowsPerID, cfg.Auto, cfg.Lambda, cfg.Clip, cfg.Schedule = "user", 3, false, 0.02, 0.5, "bounded-inverse-t"
	fit := func(glob, name string) *modelfile.Released {
		t.Helper()
		return pipelineFile(t, cfg, glob, filepath.Join(dir, name))
	}
	base := writeIDShards(t, dir, "a", 3, nil)
	r0 := fit(base, "a.json")
	sameRelease(t, "per privacy ID", r0, fitInProcess(t, cfg, base))
	checkClaim(t, "per privacy ID", r0)
	if r0.Partitions.IDs != 30 || r0.Partitions.MaxRowsPerID != 3 || r0.Partitions.Shards != nil || r0.Split.Rows != 90 {
		t.Errorf("partitions %+v, split %+v", r0.Partitions, r0.Split)
	}
	var u4 []string
	for i := range 8 {
		u4 = append(u4, fmt.Sprintf("%g,u4,%g,%s\n", 1e9*float64(1-2*(i%2)), -1e9, []string{"neg", "pos"}[i%2]))
	}
	r1 := fit(writeIDShards(t, dir, "b", 3, u4), "b.json")
	if d := floats.Distance(r0.Model.W, r1.Model.W, 2); d > r0.Certificate.L2Sensitivity {
		t.Errorf("shards differing in every row of one user: ||w - w'|| = %v > Delta = %v", d, r0.Certificate.L2Sensitivity)
	}
}

// TestLaunchPrivacyIDErrors checks that a missing privacy-ID column and c < 1
// are refused at launch, and an empty ID fails the pipeline before the
// release: no model file either way.
func TestLaunchPrivacyIDErrors(t *testing.T) {
	dir := t.TempDir()
	glob := writeIDShards(t, dir, "a", 2, nil)
	out := filepath.Join(dir, "model.json")
	for _, c := range []struct {
		id string
		c  int
	}{{"uid", 2}, {"user", 0}, {"user", -1}, {"", 2}} {
		cfg := testConfig(2, 2)
		cfg.PrivacyID, cfg.MaxRowsPerID = c.id, c.c
		if _, _, err := Launch(context.Background(), cfg, glob, out, false); err == nil {
			t.Errorf("privacy ID %q, c = %d: accepted at launch", c.id, c.c)
		}
	}
	path := filepath.Join(dir, "a", "part-0.csv")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(b), "\n", 3)
	f := strings.Split(lines[1], ",")
	f[1] = ""
	lines[1] = strings.Join(f, ",")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(2, 2)
	cfg.PrivacyID, cfg.MaxRowsPerID = "user", 2
	if err := runPipeline(t, cfg, glob, out); err == nil || !strings.Contains(err.Error(), "empty privacy ID") {
		t.Errorf("an empty privacy ID: %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a model file was written")
	}
}
