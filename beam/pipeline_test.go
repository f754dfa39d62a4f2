package stabbeam

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	//lint:ignore SA1019 the tests run the direct runner beside prism: the releases must agree
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/direct"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/partition"
	"github.com/stabpriv/stabpriv/private"
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

// pipelineFile runs the pipeline (runPipeline) into out and reads the
// model file it writes.
func pipelineFile(t *testing.T, cfg Config, glob, out string) *modelfile.Released {
	t.Helper()
	if err := runPipeline(t, cfg, glob, out); err != nil {
		t.Fatal(err)
	}
	r, err := modelfile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runPipeline runs the pipeline on the test runner (ptest: direct unless
// --test.runner says otherwise), after the checks of Launch.
func runPipeline(t *testing.T, cfg Config, glob, out string) error {
	t.Helper()
	header, shards, err := Launch(context.Background(), cfg, glob, out, false)
	if err != nil {
		return err
	}
	p, s := beam.NewPipelineWithRoot()
	Build(s, cfg, header, shards, out, false)
	return ptest.Run(p)
}

// fitInProcess runs partition.Fit on the same shards, read as stabpriv
// train reads them (placement.ReadShards).
func fitInProcess(t *testing.T, cfg Config, glob string) *modelfile.Released {
	t.Helper()
	tables, err := placement.ReadShards(glob, nil)
	if err != nil {
		t.Fatal(err)
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

// sameRelease reports how got (the pipeline's model file) differs from
// want (the in-process fit's): the weights bit for bit, the split, the
// partition layout and the certificate's sensitivity and hash.
func sameRelease(t *testing.T, name string, got, want *modelfile.Released) {
	t.Helper()
	if !slices.Equal(got.Model.W, want.Model.W) {
		t.Errorf("%s: weights differ: pipeline %v, in process %v", name, got.Model.W, want.Model.W)
	}
	if got.Split != want.Split {
		t.Errorf("%s: split %+v, in process %+v", name, got.Split, want.Split)
	}
	if !reflect.DeepEqual(got.Partitions, want.Partitions) {
		t.Errorf("%s: partitions %+v, in process %+v", name, got.Partitions, want.Partitions)
	}
	if want.Certificate != nil && (got.Certificate.L2Sensitivity != want.Certificate.L2Sensitivity || got.Certificate.WeightsSHA256 != want.Certificate.WeightsSHA256) {
		t.Errorf("%s: certificates differ: Delta %v and %v", name, got.Certificate.L2Sensitivity, want.Certificate.L2Sensitivity)
	}
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
		{"one range for every column (--bounds-all), P=2", func(c *Config) {
			c.Bounds, c.All, c.Partitions = nil, &datasets.Bound{Lo: -3, Hi: 5}, 2
		}},
		{"non-private, P=1", func(c *Config) {
			c.Mechanism, c.Auto, c.Noise, c.Lambda, c.Passes, c.Partitions = "none", false, "", 1e-3, 3, 1
		}},
	} {
		cfg := testConfig(4, 4)
		c.edit(&cfg)
		out := filepath.Join(dir, strings.NewReplacer(",", "", " ", "-", "=", "").Replace(c.name)+".json")
		got := pipelineFile(t, cfg, glob, out)
		want := fitInProcess(t, cfg, glob)
		sameRelease(t, c.name, got, want)
		if got.Split.Rows != 900 {
			t.Errorf("%s: split %+v", c.name, got.Split)
		}
		checkClaim(t, c.name, got)
	}
}

// TestConfigSchema: the schema travels whole through a Config (one range
// for all columns and the categorical columns included): a field lost on
// the way would train another feature map than the one declared.
func TestConfigSchema(t *testing.T) {
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"}, All: &datasets.Bound{Lo: -1, Hi: 2},
		Categories: []datasets.Categorical{{Column: "c", Values: []string{"u", "v"}}}}
	cfg := testConfig(0, 2)
	sc, budget, opts, err := cfg.Options()
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewConfig(schema, budget, opts, 2)
	if err != nil {
		t.Fatal(err)
	}
	got, _, _, err := c.Options()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, schema) {
		t.Errorf("schema %+v through a Config, want %+v (from %+v)", got, schema, sc)
	}
}

// TestPipelineHiveLayout trains on a Hive-style layout (dt=1/part-0.csv,
// dt=2/part-0.csv: the same base name in two directories): the shards are
// named by their paths relative to the input root, and the pipeline's
// release is the in-process fit's bit for bit.
func TestPipelineHiveLayout(t *testing.T) {
	dir := t.TempDir()
	for i, d := range []string{"dt=1", "dt=2", "dt=3"} {
		sub := filepath.Join(dir, "table", d)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		writeShards(t, sub, 1, 120+10*i, 3, uint64(i+1))
		if err := os.Rename(filepath.Join(sub, "shard-0.csv"), filepath.Join(sub, "part-0.csv")); err != nil {
			t.Fatal(err)
		}
	}
	glob := filepath.Join(dir, "table", "dt=*", "part-*.csv")
	cfg := testConfig(3, 4)
	out := filepath.Join(dir, "model.json")
	got := pipelineFile(t, cfg, glob, out)
	var names []string
	for _, sh := range got.Partitions.Shards {
		names = append(names, sh.Name)
	}
	if !slices.Equal(names, []string{"dt=1/part-0.csv", "dt=2/part-0.csv", "dt=3/part-0.csv"}) {
		t.Errorf("shard names %q", names)
	}
	sameRelease(t, "hive", got, fitInProcess(t, cfg, glob))
	checkClaim(t, "hive", got)
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
	got := pipelineFile(t, cfg, glob, out)
	sameRelease(t, "chunks", got, fitInProcess(t, cfg, glob))
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
	header, shards, err := Launch(context.Background(), cfg, glob, out, false)
	if err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	Build(s, cfg, header, shards, out, false)
	res, err := ptest.RunWithMetrics(p)
	if err != nil {
		t.Fatal(err)
	}
	if n := drawn(t, res); n != 1 {
		t.Errorf("the noise was drawn %d times, want once", n)
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

// TestPipelineBadInput checks that bad shards and settings fail with a
// clear error, at launch where they can be known (no shard, another
// header, an unreadable shard), and write no model file.
func TestPipelineBadInput(t *testing.T) {
	for _, c := range []struct {
		name   string
		setup  func(t *testing.T, dir string) (glob string, shards []ShardFile)
		edit   func(*Config)
		launch bool // refused by Launch, before the pipeline
		want   string
	}{
		{"no shard matches", func(t *testing.T, dir string) (string, []ShardFile) {
			return filepath.Join(dir, "none-*.csv"), nil
		}, nil, true, "matches no shard"},
		{"an input root with no files", func(t *testing.T, dir string) (string, []ShardFile) {
			os.Mkdir(filepath.Join(dir, "empty"), 0o755)
			return filepath.Join(dir, "empty", "*", "*.csv"), nil
		}, nil, true, "matches no shard"},
		{"a shard goes missing", func(t *testing.T, dir string) (string, []ShardFile) {
			glob := writeShards(t, dir, 3, 50, 2, 1)
			shards, err := Shards(context.Background(), glob)
			if err != nil {
				t.Fatal(err)
			}
			return glob, append(shards, ShardFile{Path: filepath.Join(dir, "shard-9.csv"), Name: "shard-9.csv"})
		}, nil, false, "shard-9.csv"},
		{"an unreadable shard (a directory)", func(t *testing.T, dir string) (string, []ShardFile) {
			glob := writeShards(t, dir, 2, 50, 2, 1)
			os.Mkdir(filepath.Join(dir, "shard-5.csv"), 0o755)
			return glob, nil
		}, nil, true, "shard-5.csv"},
		{"a shard with another header", func(t *testing.T, dir string) (string, []ShardFile) {
			glob := writeShards(t, dir, 3, 50, 2, 1)
			os.WriteFile(filepath.Join(dir, "shard-7.csv"), []byte("f0,g1,y\n1,2,pos\n"), 0o644)
			return glob, nil
		}, nil, true, `shard-7.csv: header "f0,g1,y" differs`},
		{"a model file among the shards", func(t *testing.T, dir string) (string, []ShardFile) {
			writeShards(t, dir, 2, 50, 2, 1)
			os.WriteFile(filepath.Join(dir, "shard-model.json"), []byte("{\n  \"format\": \""+modelfile.Format+"\",\n  \"private\": true\n}\n"), 0o644)
			return filepath.Join(dir, "shard-*"), nil
		}, nil, true, "shard-model.json looks like a JSON file (such as a stabpriv model file"},
		{"a shard of a header alone", func(t *testing.T, dir string) (string, []ShardFile) {
			glob := writeShards(t, dir, 3, 50, 2, 1)
			os.WriteFile(filepath.Join(dir, "shard-1.csv"), []byte("f0,f1,y\n\n"), 0o644)
			return glob, nil
		}, nil, true, "shard-1.csv: no data rows after the header"},
		{"a header alone, a shard the launch did not see", func(t *testing.T, dir string) (string, []ShardFile) {
			glob := writeShards(t, dir, 3, 50, 2, 1)
			shards, err := Shards(context.Background(), glob)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, "shard-1.csv"), []byte("f0,f1,y\n"), 0o644)
			return glob, shards
		}, nil, true, "shard-1.csv: no data rows after the header"},
		{"a ragged row in one shard", func(t *testing.T, dir string) (string, []ShardFile) {
			glob := writeShards(t, dir, 3, 50, 2, 1)
			f := filepath.Join(dir, "shard-1.csv")
			b, _ := os.ReadFile(f)
			os.WriteFile(f, append(b, []byte("1.5,pos\n")...), 0o644)
			return glob, nil
		}, nil, false, "line 52: 2 fields, the header has 3"},
		{"a malformed cell", func(t *testing.T, dir string) (string, []ShardFile) {
			glob := writeShards(t, dir, 2, 50, 2, 1)
			f := filepath.Join(dir, "shard-0.csv")
			b, _ := os.ReadFile(f)
			os.WriteFile(f, append(b, []byte("x,1,pos\n")...), 0o644)
			return glob, nil
		}, nil, false, "is not a finite number"},
		{"more partitions than rows", func(t *testing.T, dir string) (string, []ShardFile) {
			return writeShards(t, dir, 2, 5, 2, 1), nil
		}, func(c *Config) { c.Partitions = 50 }, false, "50 partitions for"},
		{"a batch larger than a partition", func(t *testing.T, dir string) (string, []ShardFile) {
			return writeShards(t, dir, 2, 50, 2, 1), nil
		}, func(c *Config) {
			c.Auto, c.Lambda, c.Schedule, c.Batch, c.Partitions = false, 0.1, "bounded-inverse-t", 30, 4
		}, false, "--batch 30 exceeds"},
		{"no sensitivity route", func(t *testing.T, dir string) (string, []ShardFile) {
			return writeShards(t, dir, 2, 50, 2, 1), nil
		}, func(c *Config) { c.Auto, c.Lambda, c.Schedule = false, 1e-4, "inverse-t" }, true, "no sensitivity route"},
	} {
		dir := t.TempDir()
		glob, shards := c.setup(t, dir)
		out := filepath.Join(dir, "out", "model.json")
		cfg := testConfig(2, 2)
		if c.edit != nil {
			c.edit(&cfg)
		}
		_, _, lerr := Launch(context.Background(), cfg, glob, out, false)
		if c.launch != (lerr != nil) {
			t.Errorf("%s: Launch: %v, want an error: %v", c.name, lerr, c.launch)
		}
		var err error
		if shards == nil {
			err = runPipeline(t, cfg, glob, out)
		} else {
			header, herr := ReadHeader(context.Background(), shards[0].Path)
			if herr != nil {
				t.Fatal(herr)
			}
			p, s := beam.NewPipelineWithRoot()
			Build(s, cfg, header, shards, out, false)
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

// TestCheckOutput checks the output location at launch: an unregistered
// scheme, a directory that cannot exist, a directory as the target, an
// existing model file or other file (without force), an input (with or
// without force), and a memfs:// URL (a registered file system where the
// probe is written and removed).
func TestCheckOutput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	model := filepath.Join(dir, "model.json")
	glob := writeShards(t, dir, 1, 40, 2, 1)
	if err := runPipeline(t, testConfig(2, 2), glob, model); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ out, want string }{
		{"hdfs://cluster/model.json", `scheme "hdfs" not registered`},
		{filepath.Join(file, "sub", "model.json"), "not a directory"},
		{dir, "not a regular file"},
		{model, "is a model file"},
		{"memfs://bucket/", "names a directory"},
	} {
		if err := CheckOutput(ctx, c.out, false); !errors.Is(err, ErrOutput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckOutput(%s): %v, want %q", c.out, err, c.want)
		}
	}
	if err := CheckOutput(ctx, model, true); err != nil {
		t.Errorf("a model file with force: %v", err)
	}
	// As stabpriv train --out: an existing file needs --force, and an
	// input is never replaced, whatever --force says.
	if err := CheckOutput(ctx, file, false); !errors.Is(err, ErrOutput) || !strings.Contains(err.Error(), "exists") {
		t.Errorf("an existing file without force: %v", err)
	}
	if err := CheckOutput(ctx, file, true); err != nil {
		t.Errorf("an existing file with force: %v", err)
	}
	shards, err := Shards(ctx, glob)
	if err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		if err := CheckOutput(ctx, shards[0].Path, force, shards[0].Path); !errors.Is(err, ErrOutput) || !strings.Contains(err.Error(), "input") {
			t.Errorf("an input as the output (force %v): %v", force, err)
		}
		if _, _, err := Launch(ctx, testConfig(2, 2), glob, shards[0].Path, force); !errors.Is(err, ErrOutput) {
			t.Errorf("Launch with an input shard as --out (force %v): %v", force, err)
		}
	}
	if err := CheckOutput(ctx, "memfs://bucket/in.csv", true, "memfs://bucket/in.csv"); !errors.Is(err, ErrOutput) {
		t.Errorf("an input URL as the output: %v", err)
	}
	if err := CheckOutput(ctx, filepath.Join(dir, "new", "deeper", "model.json"), false); err != nil {
		t.Errorf("a path in directories still to make: %v", err)
	}
	if err := CheckOutput(ctx, "memfs://bucket/model.json", false); err != nil {
		t.Errorf("memfs: %v", err)
	}
	if _, err := readFile(ctx, "memfs://bucket/model.json.stabpriv-probe"); err == nil {
		t.Error("the probe object was left behind")
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

// TestFailureCauses checks that a pipeline's failure reported as text (as
// prism and the job servers report a worker's error) wraps the sentinel
// errors its message names, and only those.
func TestFailureCauses(t *testing.T) {
	for _, c := range []struct {
		msg            string
		format, option bool
	}{
		{"job failed: DoFn failed: stabbeam: bad input: datasets: bad data format: s.csv: line 9 has 2 fields", true, false},
		{"job failed: DoFn failed: private: invalid options: 500 partitions for 95 training rows", false, true},
		{"job failed: worker lost", false, false},
		// A cell's text is quoted: it names no cause.
		{`job failed: DoFn failed: stabbeam: bad input: datasets: bad data format: s.csv: line 3: "private: invalid options" is not a finite number`, true, false},
		{`job failed: DoFn failed: x: cell "datasets: bad data format"`, false, false},
	} {
		err := newFailure(fmt.Errorf("stabbeam: the pipeline failed: %w", errors.New(c.msg)))
		if errors.Is(err, datasets.ErrFormat) != c.format || errors.Is(err, private.ErrOptions) != c.option {
			t.Errorf("%q: matches ErrFormat %v, ErrOptions %v; want %v, %v", c.msg, errors.Is(err, datasets.ErrFormat), errors.Is(err, private.ErrOptions), c.format, c.option)
		}
		if err.Error() != "stabbeam: the pipeline failed: "+c.msg {
			t.Errorf("message %q changed to %q", c.msg, err)
		}
	}
}
