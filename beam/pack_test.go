package stabbeam

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/partition"
)

// TestPackCoder: a pack survives its coder whole (names, shard indices,
// row numbers, the floats' bits, the ID and the bounded mark), and a
// truncated or padded encoding is an error, not a pack.
func TestPackCoder(t *testing.T) {
	var p Pack
	p.D, p.ID, p.Bounded = 2, "user-7", true
	p.add("dt=1/a.csv", 3, []float64{1.5, math.Inf(-1)}, 1)
	p.add("dt=2/a.csv", 9, []float64{math.Copysign(0, -1), math.SmallestNonzeroFloat64}, -1)
	p.add("", 0, []float64{0, 0}, -1)
	for _, c := range []Pack{p, {D: 3, Names: []string{"s.csv"}, Row: []int64{1, 5}, X: []float64{1, 2, 3, 4, 5, 6}, Y: []float64{0, 1}}, {D: 1}} {
		b := encodePack(c)
		got, err := decodePack(b)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if norm := func(p Pack) Pack {
			if p.Len() == 0 {
				p.Row, p.X, p.Y = nil, nil, nil
			}
			return p
		}; !reflect.DeepEqual(norm(got), norm(c)) {
			t.Errorf("decoded %+v, encoded %+v", got, c)
		}
		for _, bad := range [][]byte{b[:len(b)-1], append(slices.Clone(b), 0)} {
			if _, err := decodePack(bad); !errors.Is(err, ErrInput) {
				t.Errorf("%d bytes of %d: %v, want ErrInput", len(bad), len(b), err)
			}
		}
	}
	if got, _ := decodePack(encodePack(p)); got.Shard == nil || got.name(2) != "" || got.name(1) != "dt=2/a.csv" || math.Signbit(got.X[2]) != true {
		t.Errorf("decoded %+v", got)
	}
}

// TestPartitionMatrix: packs arriving in any order build the partition's
// matrix in position order (shard name, row number; a privacy ID's
// bounded pack by ID), the order partition.Plan.TrainPartition sorts rows
// into; a row twice, an ID twice, a pack of the other kind, or more or
// fewer rows than the layout's are errors.
func TestPartitionMatrix(t *testing.T) {
	const d = 3
	rng := rand.New(rand.NewPCG(1, 2))
	// Rows 1..40 of shards a and b, packs of 1 to 6 consecutive rows of
	// the partition (every other row), the row's value its position.
	type pos struct {
		name string
		row  int
	}
	var want []pos
	var packs []Pack
	for _, name := range []string{"b.csv", "a.csv"} {
		var cur Pack
		for r := 1; r <= 40; r += 2 {
			if cur.Len() == 0 {
				cur = Pack{D: d}
			}
			v := float64(r)
			if name == "b.csv" {
				v += 100
			}
			cur.add(name, r, []float64{v, -v, v / 2}, v)
			if rng.IntN(4) == 0 || r >= 39 {
				packs = append(packs, cur)
				cur = Pack{}
			}
		}
	}
	for _, name := range []string{"a.csv", "b.csv"} {
		for r := 1; r <= 40; r += 2 {
			want = append(want, pos{name, r})
		}
	}
	for trial := range 5 {
		rng.Shuffle(len(packs), func(i, j int) { packs[i], packs[j] = packs[j], packs[i] })
		X, y, err := partitionMatrix(0, len(want), d, false, iterOf(packs))
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			v := float64(w.row)
			if w.name == "b.csv" {
				v += 100
			}
			if got := X.RawRowView(i); !slices.Equal(got, []float64{v, -v, v / 2}) || y[i] != v {
				t.Fatalf("trial %d: row %d is %v (label %v), want %s:%d", trial, i, got, y[i], w.name, w.row)
			}
		}
	}
	// Bounded packs go by ID.
	var ids []Pack
	for _, id := range []string{"u3", "u1", "u2"} {
		p := Pack{D: d, ID: id, Bounded: true}
		v := float64(id[1] - '0')
		p.add("s.csv", int(v), []float64{v, v, v}, v)
		p.add("", 0, []float64{0, 0, 0}, -1)
		ids = append(ids, p)
	}
	X, y, err := partitionMatrix(0, 6, d, true, iterOf(ids))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(X.RawMatrix().Data, []float64{1, 1, 1, 0, 0, 0, 2, 2, 2, 0, 0, 0, 3, 3, 3, 0, 0, 0}) || !slices.Equal(y, []float64{1, -1, 2, -1, 3, -1}) {
		t.Errorf("bounded packs: %v, labels %v", X.RawMatrix().Data, y)
	}

	overlap := Pack{D: d}
	overlap.add("a.csv", 39, []float64{0, 0, 0}, 1)
	overlap.add("a.csv", 41, []float64{0, 0, 0}, 1)
	backwards := Pack{D: d}
	backwards.add("a.csv", 43, []float64{0, 0, 0}, 1)
	backwards.add("a.csv", 41, []float64{0, 0, 0}, 1)
	for name, c := range map[string]struct {
		packs   []Pack
		size    int
		bounded bool
		want    error
	}{
		"a row twice":            {append(slices.Clone(packs), overlap), len(want) + 2, false, datasets.ErrFormat},
		"rows out of order":      {append(slices.Clone(packs), backwards), len(want) + 2, false, ErrInput},
		"an ID twice":            {append(slices.Clone(ids), ids[0]), 8, true, ErrInput},
		"fewer rows":             {packs, len(want) + 1, false, ErrInput},
		"more rows":              {packs, len(want) - 1, false, ErrInput},
		"bounded packs per row":  {ids, 6, false, ErrInput},
		"unbounded packs per ID": {packs, len(want), true, ErrInput},
		"another width":          {[]Pack{{D: 2, Names: []string{"a.csv"}, Row: []int64{1}, X: []float64{1, 2}, Y: []float64{1}}}, 1, false, ErrInput},
	} {
		if _, _, err := partitionMatrix(0, c.size, d, c.bounded, iterOf(c.packs)); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

// TestTrainBundle: the partitions of a bundle train in the background and
// FinishBundle emits their results; a bundle that fails (here a partition
// with more rows than its layout) leaves no result behind for the next
// bundle of the same DoFn.
func TestTrainBundle(t *testing.T) {
	dir := t.TempDir()
	glob := writeShards(t, dir, 2, 120, 2, 6)
	cfg := testConfig(2, 3)
	header, shards, err := Launch(context.Background(), cfg, glob, filepath.Join(dir, "model.json"), false)
	if err != nil {
		t.Fatal(err)
	}
	rf := &readShardFn{Cfg: cfg, Header: header}
	if err := rf.Setup(); err != nil {
		t.Fatal(err)
	}
	byPart := map[int][]Pack{}
	var total Count
	for _, sh := range shards {
		if err := rf.ProcessElement(context.Background(), Block{Path: sh.Path, Name: sh.Name, Length: -1}, func(p int, pk Pack) { byPart[p] = append(byPart[p], pk) }, func(c Count) { total = addCounts(total, c) }, func(string) {}); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := cfg.Plan(header)
	if err != nil {
		t.Fatal(err)
	}
	layout, err := plan.Layout(total.shards())
	if err != nil {
		t.Fatal(err)
	}
	tf := &trainFn{Cfg: cfg, Header: header}
	if err := tf.Setup(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := tf.ProcessElement(ctx, 0, iterOf(byPart[0]), iterOf([]partition.Layout{layout}), nil); err != nil {
		t.Fatal(err)
	}
	short := partition.Layout{Rows: layout.Rows, Train: layout.Train, Sizes: slices.Clone(layout.Sizes)}
	short.Sizes[1]--
	if err := tf.ProcessElement(ctx, 1, iterOf(byPart[1]), iterOf([]partition.Layout{short}), nil); !errors.Is(err, ErrInput) {
		t.Fatalf("a partition with more rows than its layout: %v, want ErrInput", err)
	}
	// The next bundle: partition 2 alone, and partition 0 again without a
	// layout (the layout step failed, its output is empty): that element
	// neither fails nor trains, so the layout step's error stays the job's.
	if err := tf.ProcessElement(ctx, 2, iterOf(byPart[2]), iterOf([]partition.Layout{layout}), nil); err != nil {
		t.Fatal(err)
	}
	if err := tf.ProcessElement(ctx, 0, iterOf(byPart[0]), iterOf[partition.Layout](nil), nil); err != nil {
		t.Fatalf("a partition without a layout: %v, want nothing done", err)
	}
	var got []partition.Result
	if err := tf.FinishBundle(ctx, iterOf([]partition.Layout{layout}), func(b []byte) {
		var r partition.Result
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Partition != 2 || got[0].N != layout.Sizes[2] {
		t.Errorf("the bundle after a failed one emitted %d results (%+v), want partition 2's alone", len(got), got)
	}
}

// iterOf returns an iterator over vs, as a runner hands a key's grouped
// values, or an iterable side input, to a DoFn.
func iterOf[T any](vs []T) func(*T) bool {
	i := 0
	return func(v *T) bool {
		if i == len(vs) {
			return false
		}
		*v = vs[i]
		i++
		return true
	}
}
