package datasets

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"testing"
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
		if _, _, _, err := IDLayout(tc.ids, 1, 0, tc.c, tc.p); !errors.Is(err, ErrFormat) {
			t.Errorf("%v, c = %d, P = %d: %v", tc.ids, tc.c, tc.p, err)
		}
	}
}

func TestTableWithout(t *testing.T) {
	tab, err := NewTable("t.csv", []string{"a", "id", "b"}, [][]string{{"1", "u1", "x"}, {"2.5", "7", "3"}})
	if err != nil {
		t.Fatal(err)
	}
	w := tab.Without(1)
	if !slices.Equal(w.Columns, []string{"a", "b"}) || w.Len() != 2 || w.Cell(0, 1) != "x" || w.Cell(1, 0) != "2.5" || w.Cell(1, 1) != "3" || w.Line(1) != 3 {
		t.Errorf("without column 1: %v, rows %d, cells %q %q %q", w.Columns, w.Len(), w.Cell(0, 1), w.Cell(1, 0), w.Cell(1, 1))
	}
	if tab.Cell(0, 1) != "u1" {
		t.Error("Without changed the table")
	}
}
