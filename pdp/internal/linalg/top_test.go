package linalg

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// TestTop checks Top against a stable sort of every index, with ties, for
// k from 0 to beyond n, on both of its paths.
func TestTop(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 100, 1000} {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(r.IntN(20)) // many ties
		}
		before := func(i, j int) bool { return v[i] > v[j] }
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		sort.SliceStable(all, func(a, b int) bool { return before(all[a], all[b]) })
		for _, k := range []int{-1, 0, 1, 3, 10, 100, n, n + 5} {
			want := all[:max(0, min(k, n))]
			if got := Top(n, k, before); !slices.Equal(got, want) {
				t.Errorf("n %d, k %d: %v, want %v", n, k, got, want)
			}
		}
	}
}
