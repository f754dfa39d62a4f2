package stabbeam

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/stabpriv/stabpriv/datasets/placement"
)

// TestCountIDs counts privacy IDs that repeat (an ID read in several
// blocks or shards is emitted once by each) with countIDs: the count is
// that of the distinct IDs, each once, as the in-process fit counts them
// (placement.CountIDs); an empty ID fails the pipeline with the layout's
// error.
func TestCountIDs(t *testing.T) {
	cfg := testConfig(2, 3)
	var distinct, emitted []string
	rng := rand.New(rand.NewPCG(21, 1))
	for u := range 50 {
		id := fmt.Sprintf("u%d", u)
		distinct = append(distinct, id)
		for range 1 + rng.IntN(3) {
			emitted = append(emitted, id)
		}
	}
	rng.Shuffle(len(emitted), func(i, j int) { emitted[i], emitted[j] = emitted[j], emitted[i] })
	want, err := placement.CountIDs(distinct, cfg.Seed, cfg.TestFrac, cfg.Partitions)
	if err != nil {
		t.Fatal(err)
	}
	if len(emitted) == len(distinct) || want.IDs != 50 || want.Train[0]+want.Train[1]+want.Train[2] == 50 {
		t.Fatalf("the test needs repeats and held-out IDs: %d emitted, counts %+v", len(emitted), want)
	}
	p, s := beam.NewPipelineWithRoot()
	beam.ParDo0(s, &idCountsIs{Want: want}, beam.Impulse(s), beam.SideInput{Input: countIDs(s, cfg, beam.CreateList(s, emitted))})
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}

	_, _, _, layoutErr := placement.IDLayout([]string{""}, cfg.Seed, cfg.TestFrac, 2, cfg.Partitions)
	p, s = beam.NewPipelineWithRoot()
	countIDs(s, cfg, beam.CreateList(s, []string{"a", "", "b"}))
	if err := ptest.Run(p); err == nil || layoutErr == nil || !strings.Contains(err.Error(), layoutErr.Error()) {
		t.Errorf("an empty ID: %v, want the layout's error %v", err, layoutErr)
	}
}

func init() {
	beam.RegisterType(reflect.TypeOf((*idCountsIs)(nil)).Elem())
}

// idCountsIs fails the pipeline unless its side input holds exactly one
// element, equal to Want. It is passert.Equals for one value, without the
// SDK's passert package, whose generically registered DoFns take 10 s of CPU
// to compile.
type idCountsIs struct{ Want placement.IDCounts }

func (c *idCountsIs) ProcessElement(_ []byte, counts func(*placement.IDCounts) bool) error {
	var got []placement.IDCounts
	var v placement.IDCounts
	for counts(&v) {
		got = append(got, v)
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0], c.Want) {
		return fmt.Errorf("counts %+v, want exactly one, %+v", got, c.Want)
	}
	return nil
}

// TestIDCountsAccumulator checks, by its type and its size, that the
// combine that counts the distinct IDs holds no ID: its accumulator and
// output have no string anywhere in their type, and after 10^4 IDs the
// accumulator is still P + 1 integers. The other elements of the per-ID
// path hold one ID each (an ID read from a block; distinctIDs' pair
// of an ID and 1; a pack of one ID's rows), and Count, the other global
// combine, has no field for IDs, so no element or accumulator of the
// pipeline holds the list of IDs.
func TestIDCountsAccumulator(t *testing.T) {
	fn := idCountsFn{Seed: 4, TestFrac: 0.2, Partitions: 5}
	for _, name := range []string{"CreateAccumulator", "ExtractOutput", "AddInput", "MergeAccumulators"} {
		m, _ := reflect.TypeOf(fn).MethodByName(name)
		if at := m.Type.Out(0); holdsString(at, nil) {
			t.Errorf("%s returns %v, which can hold strings", name, at)
		}
	}
	if holdsString(reflect.TypeOf(Count{}), map[reflect.Type]bool{reflect.TypeOf(placement.Shard{}): true}) {
		t.Error("Count holds strings other than the shards' names")
	}
	acc := fn.CreateAccumulator()
	for u := range 10000 {
		var err error
		if acc, err = fn.AddInput(acc, fmt.Sprintf("user-%d", u)); err != nil {
			t.Fatal(err)
		}
	}
	acc = fn.MergeAccumulators(acc, fn.CreateAccumulator())
	if acc.IDs != 10000 || len(acc.Train) != 5 {
		t.Errorf("accumulator of 10^4 IDs: %d IDs, %d partition counts", acc.IDs, len(acc.Train))
	}
}

// holdsString reports whether a value of type t can hold a string (in a
// field, element, key or behind a pointer or interface), not looking
// inside the types in skip.
func holdsString(t reflect.Type, skip map[reflect.Type]bool) bool {
	if skip[t] {
		return false
	}
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		return true
	case reflect.Slice, reflect.Array, reflect.Pointer, reflect.Chan:
		return holdsString(t.Elem(), skip)
	case reflect.Map:
		return holdsString(t.Key(), skip) || holdsString(t.Elem(), skip)
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsString(t.Field(i).Type, skip) {
				return true
			}
		}
	}
	return false
}

// TestPipelineIDInTwoShards runs the pipeline per privacy ID on shards
// where every ID has rows in both shards, read in several blocks each: an
// ID counts once, so the layout (the number of IDs, the rows, the
// partition sizes) is that of the distinct IDs and equals train
// --partitions's, and so is the model file.
func TestPipelineIDInTwoShards(t *testing.T) {
	defer func(b, c int) { blockRows, chunkRows = b, c }(blockRows, chunkRows)
	blockRows, chunkRows = 7, 3
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(21, 3))
	shards := []string{"f0,user,f1,y\n", "f0,user,f1,y\n"}
	var users []string
	for u := range 24 {
		id := fmt.Sprintf("user-%d", u)
		users = append(users, id)
		for sh := range shards {
			for range 1 + rng.IntN(2) {
				c := rng.IntN(2)
				shards[sh] += fmt.Sprintf("%g,%s,%g,%s\n", 2*float64(2*c-1)+rng.NormFloat64(), id, rng.NormFloat64(), []string{"neg", "pos"}[c])
			}
		}
	}
	for i, text := range shards {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.csv", i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	glob := filepath.Join(dir, "part-*.csv")
	cfg := testConfig(2, 3)
	cfg.PrivacyID, cfg.MaxRowsPerID, cfg.Auto, cfg.Lambda, cfg.Clip, cfg.Schedule = "user", 2, false, 0.02, 0.5, "bounded-inverse-t"
	got := pipelineFile(t, cfg, glob, filepath.Join(dir, "model.json"))
	want := fitInProcess(t, cfg, glob)
	sameRelease(t, "an ID in two shards", got, want)
	rows, train, sizes, err := placement.IDLayout(users, cfg.Seed, cfg.TestFrac, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got.Partitions.IDs != 24 || want.Partitions.IDs != 24 || got.Split.Rows != rows || got.Split.TrainRows != train || !slices.Equal(got.Partitions.Sizes, sizes) {
		t.Errorf("%d IDs, split %+v, sizes %v; want 24 IDs, %d rows (%d training), sizes %v", got.Partitions.IDs, got.Split, got.Partitions.Sizes, rows, train, sizes)
	}
}
