package placement

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
)

func TestBoundContributions(t *testing.T) {
	for _, tc := range []struct{ m, c int }{{0, 1}, {1, 1}, {3, 5}, {5, 5}, {6, 5}, {40, 3}} {
		got := BoundContributions(7, "user-1", tc.m, tc.c)
		if len(got) != min(tc.m, tc.c) || !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Errorf("m = %d, c = %d: ranks %v", tc.m, tc.c, got)
		}
		for _, k := range got {
			if k < 0 || k >= tc.m {
				t.Errorf("m = %d, c = %d: rank %d", tc.m, tc.c, k)
			}
		}
		if !slices.Equal(got, BoundContributions(7, "user-1", tc.m, tc.c)) {
			t.Errorf("m = %d, c = %d: not deterministic", tc.m, tc.c)
		}
	}
	// Each of m = 10 ranks is kept with probability c/m = 0.3 over IDs:
	// over 20000 IDs a count is Binomial(20000, 0.3), sd 64.8; 6 sd fails
	// with probability below 1e-8 per rank.
	counts := make([]int, 10)
	for u := range 20000 {
		for _, k := range BoundContributions(1, "u"+strconv.Itoa(u), 10, 3) {
			counts[k]++
		}
	}
	for k, n := range counts {
		if math.Abs(float64(n)-6000) > 6*64.8 {
			t.Errorf("rank %d kept for %d of 20000 IDs, want about 6000", k, n)
		}
	}
	if slices.Equal(BoundContributions(1, "a", 10, 3), BoundContributions(2, "a", 10, 3)) && slices.Equal(BoundContributions(1, "b", 10, 3), BoundContributions(2, "b", 10, 3)) {
		t.Error("the seed does not change the choice")
	}
}

func TestIDLayout(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e", "f"}
	rows, train, sizes, err := IDLayout(ids, 3, 0, 4, 2)
	if err != nil || rows != 24 || train != 24 || sizes[0]+sizes[1] != 24 || sizes[0]%4 != 0 {
		t.Errorf("layout %d %d %v %v", rows, train, sizes, err)
	}
	for _, tc := range []struct {
		ids  []string
		c, p int
	}{{nil, 1, 1}, {[]string{"a", "a"}, 1, 1}, {[]string{""}, 1, 1}, {ids, 0, 1}, {ids, 1, 0}} {
		if _, _, _, err := IDLayout(tc.ids, 1, 0, tc.c, tc.p); !errors.Is(err, datasets.ErrFormat) {
			t.Errorf("%v, c = %d, P = %d: %v", tc.ids, tc.c, tc.p, err)
		}
	}
}

// TestIDCounts checks the counts of random sets of distinct IDs against
// the layout computed from the IDs directly (each ID's partition and
// held-out flag): equal whether the IDs are counted at once (IDLayout) or
// one at a time, in shuffled order, merged in a random tree of partial
// sums (as a distributed combine merges them), zero counts included.
func TestIDCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2))
	for trial := range 40 {
		n, p, c := 1+rng.IntN(300), 1+rng.IntN(9), 1+rng.IntN(5)
		seed, testFrac := rng.Uint64(), []float64{0, 0.2, 0.5}[trial%3]
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("user-%d-%x", i, rng.Uint32())
		}
		// The layout from the IDs themselves.
		wantRows, wantTrain, wantSizes := c*n, 0, make([]int, p)
		for _, id := range ids {
			if !IDHeldOut(seed, id, testFrac) {
				wantSizes[IDPartition(seed, id, p)] += c
				wantTrain += c
			}
		}
		check := func(how string, rows, train int, sizes []int, err error) {
			t.Helper()
			if err != nil || rows != wantRows || train != wantTrain || !slices.Equal(sizes, wantSizes) {
				t.Errorf("trial %d (%s): layout %d %d %v %v, want %d %d %v", trial, how, rows, train, sizes, err, wantRows, wantTrain, wantSizes)
			}
		}
		rows, train, sizes, err := IDLayout(ids, seed, testFrac, c, p)
		check("IDLayout", rows, train, sizes, err)

		// One ID at a time in shuffled order, merged as a random tree.
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		parts := []IDCounts{{}}
		for _, id := range ids {
			one, err := CountID(id, seed, testFrac, p)
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, one)
		}
		for len(parts) > 1 {
			i := rng.IntN(len(parts) - 1)
			parts[i].Add(parts[i+1])
			parts = slices.Delete(parts, i+1, i+2)
		}
		if parts[0].IDs != n {
			t.Errorf("trial %d: %d IDs counted, want %d", trial, parts[0].IDs, n)
		}
		rows, train, sizes, err = parts[0].Layout(c, p)
		check("merged", rows, train, sizes, err)
	}
}

// TestIDCountsErrors: no ID, an empty or repeated ID, c < 1, partitions
// out of range and counts no set of IDs has are errors wrapping datasets.ErrFormat;
// an empty ID counted alone gives IDLayout's error.
func TestIDCountsErrors(t *testing.T) {
	a, err := CountID("a", 1, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, want := IDLayout([]string{"a", ""}, 1, 0, 1, 2)
	if _, err := CountID("", 1, 0, 2); !errors.Is(err, datasets.ErrFormat) || want == nil || err.Error() != want.Error() {
		t.Errorf("an empty ID: %v, want %v", err, want)
	}
	for _, p := range []int{0, -1, MaxPartitions + 1} {
		if _, err := CountID("a", 1, 0, p); !errors.Is(err, datasets.ErrFormat) {
			t.Errorf("CountID, P = %d: %v", p, err)
		}
	}
	if _, err := CountIDs([]string{"a", "b", "a"}, 1, 0, 2); !errors.Is(err, datasets.ErrFormat) {
		t.Errorf("a repeated ID: %v", err)
	}
	n := IDCounts{IDs: 1, Train: []int{1, 0}}
	for _, tc := range []struct {
		id string
		p  int
	}{{"b", 3}, {"", 2}, {"b", 0}} {
		if err := n.AddID(tc.id, 1, 0, tc.p); !errors.Is(err, datasets.ErrFormat) || n.IDs != 1 || !slices.Equal(n.Train, []int{1, 0}) {
			t.Errorf("AddID(%q) with P = %d to counts of 2 partitions: %v, counts %+v", tc.id, tc.p, err, n)
		}
	}
	for _, tc := range []struct {
		name string
		n    IDCounts
		c, p int
	}{
		{"no ID", IDCounts{}, 1, 2},
		{"no ID, partitions counted", IDCounts{Train: []int{0, 0}}, 1, 2},
		{"c = 0", a, 0, 2},
		{"c = -1", a, -1, 2},
		{"P = 0", a, 1, 0},
		{"P too large", a, 1, MaxPartitions + 1},
		{"another P", a, 1, 3},
		{"negative", IDCounts{IDs: 2, Train: []int{-1, 1}}, 1, 2},
		{"more training IDs than IDs", IDCounts{IDs: 2, Train: []int{2, 1}}, 1, 2},
		{"overflow", IDCounts{IDs: math.MaxInt / 2, Train: []int{0, 0}}, 3, 2},
	} {
		if _, _, _, err := tc.n.Layout(tc.c, tc.p); !errors.Is(err, datasets.ErrFormat) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if _, _, _, err := a.Layout(1, 2); err != nil {
		t.Errorf("one ID: %v", err)
	}
}
