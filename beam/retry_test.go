package stabbeam

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/internal/safefile"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/partition"
)

func init() {
	register.DoFn2x0[int, []byte](&captureFn{})
}

// committedReleases holds what captureFn saw: the committed release.
var committedReleases struct {
	sync.Mutex
	files [][]byte
}

// captureFn records the output of the release step (what the runner
// commits and the sink reads) for the test to replay.
type captureFn struct{}

func (captureFn) ProcessElement(_ int, b []byte) {
	committedReleases.Lock()
	defer committedReleases.Unlock()
	committedReleases.files = append(committedReleases.files, bytes.Clone(b))
}

// TestReleaseRetrySafe forces the retries a distributed runner makes. The
// embedded runners do not retry failed bundles, so the test replays the
// bundles as a runner does, with the committed input: a sink bundle that
// fails after writing the model file is retried with the committed
// release and writes the same bytes; a retried release bundle draws again, but its
// output is not committed twice, and a sink that were handed two releases
// writes neither.
func TestReleaseRetrySafe(t *testing.T) {
	dir := t.TempDir()
	glob := writeShards(t, dir, 2, 150, 3, 5)
	cfg := testConfig(3, 3)
	cfg.Noise = "" // secure: every draw differs
	out := filepath.Join(dir, "model.json")
	header, shards, err := Launch(context.Background(), cfg, glob, out, false)
	if err != nil {
		t.Fatal(err)
	}
	committedReleases.files = nil

	// The sink's first attempt fails after the model file is written.
	attempts := 0
	afterSinkWrite = func(string) error {
		attempts++
		if attempts == 1 {
			return errors.New("the worker died after writing")
		}
		return nil
	}
	defer func() { afterSinkWrite = nil }()
	p, s := beam.NewPipelineWithRoot()
	released := Release(s, cfg, header, shards)
	WriteRelease(s, released, out, false)
	beam.ParDo0(s, &captureFn{}, released)
	err = ptest.Run(p)
	if err == nil || !strings.Contains(err.Error(), "the worker died after writing") {
		t.Fatalf("the failing sink bundle: %v", err)
	}
	if len(committedReleases.files) != 1 {
		t.Fatalf("%d committed releases, want 1", len(committedReleases.files))
	}
	committed := committedReleases.files[0]
	first, err := os.ReadFile(out)
	if err != nil || !bytes.Equal(first, committed) {
		t.Fatalf("the first attempt wrote %d bytes (%v), the committed release has %d", len(first), err, len(committed))
	}

	// The runner retries the sink bundle with the committed release.
	sink := &sinkFn{Out: out}
	if err := sink.ProcessElement(context.Background(), 0, iterOf([][]byte{committed})); err != nil {
		t.Fatalf("retried sink: %v", err)
	}
	again, err := os.ReadFile(out)
	if err != nil || !bytes.Equal(again, committed) {
		t.Fatal("the retried sink did not write the committed release")
	}
	r, err := modelfile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checkClaim(t, "retried", r)

	// A retried release bundle draws anew: two draws differ, so only the
	// committed one may reach the sink.
	var rs results
	var total Count
	if err := readBack(t, cfg, header, shards, &rs, &total); err != nil {
		t.Fatal(err)
	}
	rel := &releaseFn{Cfg: cfg, Header: header}
	var draws [][]byte
	for range 2 {
		if err := rel.ProcessElement(context.Background(), rs, total, placement.IDCounts{}, func(_ int, b []byte) { draws = append(draws, b) }); err != nil {
			t.Fatal(err)
		}
	}
	if bytes.Equal(draws[0], draws[1]) {
		t.Fatal("two secure draws are equal")
	}
	// Another run's release at the same path is not replaced without
	// --force: of concurrent runs to one new --out, one writes it.
	err = (&sinkFn{Out: out}).ProcessElement(context.Background(), 0, iterOf(draws[:1]))
	if !errors.Is(err, safefile.ErrExists) {
		t.Errorf("a sink writing another release over the model file: %v, want safefile.ErrExists", err)
	}
	if kept, _ := os.ReadFile(out); !bytes.Equal(kept, committed) {
		t.Error("another release replaced the model file without --force")
	}
	if err := (&sinkFn{Out: out, Force: true}).ProcessElement(context.Background(), 0, iterOf(draws[:1])); err != nil {
		t.Errorf("a sink with --force: %v", err)
	}
	other := filepath.Join(dir, "other.json")
	err = (&sinkFn{Out: other}).ProcessElement(context.Background(), 0, iterOf(draws))
	if err == nil || !strings.Contains(err.Error(), "more than one release") {
		t.Errorf("two releases at the sink: %v", err)
	}
	if _, err := os.Stat(other); !errors.Is(err, os.ErrNotExist) {
		t.Error("a sink handed two releases wrote one")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".stabpriv-tmp-*")); len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

// readBack computes the inputs of the release step (the partitions'
// results and the counts) by running the pipeline up to it in process,
// for the replay of a release bundle.
func readBack(t *testing.T, cfg Config, header []string, shards []ShardFile, rs *results, total *Count) error {
	t.Helper()
	plan, err := cfg.Plan(header)
	if err != nil {
		return err
	}
	rf := &readShardFn{Cfg: cfg, Header: header}
	if err := rf.Setup(); err != nil {
		return err
	}
	byPart := map[int][]Pack{}
	for _, sh := range shards {
		err := rf.ProcessElement(context.Background(), Block{Path: sh.Path, Name: sh.Name, Length: -1}, func(p int, pk Pack) { byPart[p] = append(byPart[p], pk) }, func(c Count) { *total = addCounts(*total, c) }, func(string) {})
		if err != nil {
			return err
		}
	}
	layout, err := plan.Layout(total.shards())
	if err != nil {
		return err
	}
	tf := &trainFn{Cfg: cfg, Header: header}
	if err := tf.Setup(); err != nil {
		return err
	}
	for p := range cfg.Partitions {
		rows := byPart[p]
		i := 0
		next := func(r *Pack) bool {
			if i == len(rows) {
				return false
			}
			*r = rows[i]
			i++
			return true
		}
		if err := tf.ProcessElement(context.Background(), p, next, iterOf([]partition.Layout{layout}), nil); err != nil {
			return err
		}
	}
	if err := tf.FinishBundle(context.Background(), iterOf([]partition.Layout{layout}), func(b []byte) { rs.Items = append(rs.Items, b) }); err != nil {
		return err
	}
	if len(rs.Items) != cfg.Partitions {
		return errors.New("not every partition trained")
	}
	return nil
}

// drawn returns the releases-drawn counter of a pipeline's result.
func drawn(t *testing.T, res beam.PipelineResult) int64 {
	t.Helper()
	if res == nil {
		t.Fatal("no pipeline result")
	}
	for _, c := range res.Metrics().AllMetrics().Counters() {
		if c.Name() == "releases-drawn" {
			return c.Result()
		}
	}
	t.Fatal("no releases-drawn counter")
	return 0
}
