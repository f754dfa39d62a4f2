package trainer

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPoissonSampler checks the exported sampler: b = n draws every row,
// the batches are those of a DP-SGD run's coins (the same words in the
// same order: bernoulli64 per block of 64 rows), and bad arguments panic.
func TestPoissonSampler(t *testing.T) {
	all := NewPoissonSampler(rand.NewPCG(1, 1), 5, 5).Sample(nil)
	if !slices.Equal(all, []int{0, 1, 2, 3, 4}) {
		t.Errorf("b = n: batch %v, want every row", all)
	}
	const n, b = 150, 30
	s := NewPoissonSampler(rand.NewPCG(2, 3), n, b)
	coins := rand.NewPCG(2, 3)
	thr := uint64(float64(b) / n * (1 << 63) * 2)
	var batch []int
	for range 20 {
		batch = s.Sample(batch)
		var want []int
		for base := 0; base < n; base += 64 {
			in := bernoulli64(coins, thr)
			for j := 0; j < 64 && base+j < n; j++ {
				if in>>uint(j)&1 == 1 {
					want = append(want, base+j)
				}
			}
		}
		if !slices.Equal(batch, want) {
			t.Fatalf("batch %v, want %v", batch, want)
		}
	}
	for _, bad := range [][2]int{{5, 0}, {5, 6}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("n = %d, b = %d: no panic", bad[0], bad[1])
				}
			}()
			NewPoissonSampler(rand.NewPCG(1, 1), bad[0], bad[1])
		}()
	}
}
