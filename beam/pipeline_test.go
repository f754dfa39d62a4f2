package stabbeam

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/direct"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/partition"
)

func TestMain(m *testing.M) {
	ptest.MainWithDefault(m, "direct")
}

// writeShards writes k CSV shards of rows binary rows with d features into
// dir (shard-<i>.csv) and returns the glob.
func writeShards(t *testing.T, dir string, k, rows, d int, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	for i := range k {
		var b strings.Builder
		for j := range d {
			fmt.Fprintf(&b, "f%d,", j)
		}
		b.WriteString("y\n")
		for r := range rows {
			c := (r + i) % 2
			for j := range d {
				v := rng.NormFloat64()
				if j == 0 && c == 1 {
					v += 2
				}
				b.WriteString(strconv.FormatFloat(v, 'g', -1, 64) + ",")
			}
			b.WriteString([]string{"neg", "pos"}[c] + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("shard-%d.csv", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "shard-*.csv")
}

func testConfig(d, parts int) Config {
	c := Config{Label: "y", Classes: []string{"neg", "pos"}, Seed: 3, Partitions: parts,
		Mechanism: "gamma", Epsilon: 1, Auto: true, Noise: "seeded", NoiseSeed: 9, TestFrac: 0.2}
	for j := range d {
		c.Bounds = append(c.Bounds, datasets.Bound{Column: fmt.Sprintf("f%d", j), Lo: -3, Hi: 5})
	}
	return c
}

// runPipeline runs the pipeline on the test runner (ptest: direct unless
// --test.runner says otherwise).
func runPipeline(t *testing.T, cfg Config, glob, out string) error {
	t.Helper()
	ctx := context.Background()
	files, err := Shards(ctx, glob)
	if err != nil {
		return err
	}
	header, err := ReadHeader(ctx, files[0])
	if err != nil {
		return err
	}
	if _, err := cfg.Plan(header); err != nil {
		return err
	}
	p, s := beam.NewPipelineWithRoot()
	Build(s, cfg, header, files, out)
	return ptest.Run(p)
}

// fitInProcess runs partition.Fit on the same shards.
func fitInProcess(t *testing.T, cfg Config, glob string) *modelfile.Released {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	var tables []*datasets.Table
	for _, f := range files {
		tab, err := datasets.ReadTableFile(f)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, tab)
	}
	schema, budget, opts, err := cfg.Options()
	if err != nil {
		t.Fatal(err)
	}
	r, err := partition.Fit(context.Background(), tables, schema, budget, opts, cfg.Partitions)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPipelineMatchesFitPartitioned runs the pipeline and FitPartitioned on
// the same shards and seeds: the weights agree to 1e-12, the certificates
// are the same, and Verify accepts the model file.
func TestPipelineMatchesFitPartitioned(t *testing.T) {
	dir := t.TempDir()
	glob := writeShards(t, dir, 3, 300, 4, 1)
	for _, c := range []struct {
		name string
		edit func(*Config)
	}{
		{"gamma, auto, seeded noise, test-frac 0.2, P=4", func(*Config) {}},
		{"laplace, lambda, test-frac 0, P=7", func(c *Config) {
			c.Mechanism, c.Auto, c.Lambda, c.Clip, c.Schedule, c.TestFrac, c.Partitions = "laplace", false, 0.01, 0.5, "bounded-inverse-t", 0, 7
		}},
		{"non-private, P=1", func(c *Config) {
			c.Mechanism, c.Auto, c.Noise, c.Lambda, c.Passes, c.Partitions = "none", false, "", 1e-3, 3, 1
		}},
	} {
		cfg := testConfig(4, 4)
		c.edit(&cfg)
		out := filepath.Join(dir, strings.NewReplacer(",", "", " ", "-", "=", "").Replace(c.name)+".json")
		if err := runPipeline(t, cfg, glob, out); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := modelfile.ReadFile(out)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := fitInProcess(t, cfg, glob)
		for i := range want.Model.W {
			if math.Abs(got.Model.W[i]-want.Model.W[i]) > 1e-12 {
				t.Errorf("%s: weight %d: pipeline %.17g, in process %.17g", c.name, i, got.Model.W[i], want.Model.W[i])
			}
		}
		if got.Split != want.Split || got.Split.Rows != 900 {
			t.Errorf("%s: split %+v, in process %+v", c.name, got.Split, want.Split)
		}
		checkClaim(t, c.name, got)
		if want.Certificate != nil && (got.Certificate.L2Sensitivity != want.Certificate.L2Sensitivity || got.Certificate.WeightsSHA256 != want.Certificate.WeightsSHA256) {
			t.Errorf("%s: certificates differ: Delta %v and %v", c.name, got.Certificate.L2Sensitivity, want.Certificate.L2Sensitivity)
		}
	}
}

// TestPipelineChunks reads the shards in chunks that end inside them: the
// release is the in-process fit's, and an error in a later chunk names its
// line and data row in the shard.
func TestPipelineChunks(t *testing.T) {
	defer func(n int) { chunkRows = n }(chunkRows)
	chunkRows = 37
	dir := t.TempDir()
	glob := writeShards(t, dir, 3, 100, 2, 4)
	cfg := testConfig(2, 3)
	out := filepath.Join(dir, "model.json")
	if err := runPipeline(t, cfg, glob, out); err != nil {
		t.Fatal(err)
	}
	got, err := modelfile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := fitInProcess(t, cfg, glob)
	for i := range want.Model.W {
		if math.Abs(got.Model.W[i]-want.Model.W[i]) > 1e-12 {
			t.Errorf("weight %d: pipeline %.17g, in process %.17g", i, got.Model.W[i], want.Model.W[i])
		}
	}
	if got.Split != want.Split || got.Certificate.WeightsSHA256 != want.Certificate.WeightsSHA256 {
		t.Errorf("split %+v, in process %+v", got.Split, want.Split)
	}
	f := filepath.Join(dir, "shard-1.csv")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, append(b, []byte("1,oops,pos\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	err = runPipeline(t, cfg, glob, filepath.Join(dir, "bad.json"))
	if want := `line 102, data row 101, column "f1": "oops" is not a finite number`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one saying %s", err, want)
	}
}

// TestPipelineSecureRelease checks that a release with the secure source
// is verified as private.
func TestPipelineSecureRelease(t *testing.T) {
	dir := t.TempDir()
	glob := writeShards(t, dir, 2, 200, 3, 2)
	cfg := testConfig(3, 3)
	cfg.Noise = ""
	out := filepath.Join(dir, "model.json")
	if err := runPipeline(t, cfg, glob, out); err != nil {
		t.Fatal(err)
	}
	r, err := modelfile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkClaim(t, "secure", r)
	if !r.Private || !r.Certificate.Private {
		t.Error("a secure release is not marked private")
	}
}

// TestPipelineBadInput checks that bad shards fail the pipeline with a clear
// error and write no model file.
func TestPipelineBadInput(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, dir string) (glob string, files []string)
		parts int
		want  string
	}{
		{"no shard matches", func(t *testing.T, dir string) (string, []string) {
			return filepath.Join(dir, "none-*.csv"), nil
		}, 2, "matches no shard"},
		{"a shard goes missing", func(t *testing.T, dir string) (string, []string) {
			glob := writeShards(t, dir, 3, 50, 2, 1)
			files, _ := filepath.Glob(glob)
			return glob, append(files, filepath.Join(dir, "shard-9.csv"))
		}, 2, "shard-9.csv"},
		{"an unreadable shard (a directory)", func(t *testing.T, dir string) (string, []string) {
			glob := writeShards(t, dir, 2, 50, 2, 1)
			os.Mkdir(filepath.Join(dir, "shard-5.csv"), 0o755)
			return glob, nil
		}, 2, "shard-5.csv"},
		{"a ragged row in one shard", func(t *testing.T, dir string) (string, []string) {
			glob := writeShards(t, dir, 3, 50, 2, 1)
			f := filepath.Join(dir, "shard-1.csv")
			b, _ := os.ReadFile(f)
			os.WriteFile(f, append(b, []byte("1.5,pos\n")...), 0o644)
			return glob, nil
		}, 2, "line 52 has 2 fields, the header has 3"},
		{"a malformed cell", func(t *testing.T, dir string) (string, []string) {
			glob := writeShards(t, dir, 2, 50, 2, 1)
			f := filepath.Join(dir, "shard-0.csv")
			b, _ := os.ReadFile(f)
			os.WriteFile(f, append(b, []byte("x,1,pos\n")...), 0o644)
			return glob, nil
		}, 2, "is not a finite number"},
		{"more partitions than rows", func(t *testing.T, dir string) (string, []string) {
			return writeShards(t, dir, 2, 5, 2, 1), nil
		}, 50, "50 partitions for"},
	} {
		dir := t.TempDir()
		glob, files := c.setup(t, dir)
		out := filepath.Join(dir, "out", "model.json")
		cfg := testConfig(2, c.parts)
		var err error
		if files == nil {
			err = runPipeline(t, cfg, glob, out)
		} else {
			header, herr := ReadHeader(context.Background(), files[0])
			if herr != nil {
				t.Fatal(herr)
			}
			p, s := beam.NewPipelineWithRoot()
			Build(s, cfg, header, files, out)
			err = ptest.Run(p)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
		if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("%s: a model file was written", c.name)
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "out", "*")); len(m) > 0 {
			t.Errorf("%s: files left in the output directory: %v", c.name, m)
		}
	}
}

// checkClaim verifies a model file as stabpriv certify does: the verdict
// is a private release for a secure release, not private otherwise.
func checkClaim(t *testing.T, name string, r *modelfile.Released) {
	t.Helper()
	want := modelfile.NotPrivate
	if r.Private {
		want = modelfile.PrivateRelease
	}
	if v, why, err := modelfile.Verify(r); err != nil || v != want {
		t.Errorf("%s: Verify: %v %q %v, want %v", name, v, why, err, want)
	}
}
