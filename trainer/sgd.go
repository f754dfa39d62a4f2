package trainer

import (
	"math"
	"math/rand/v2"

	gonumblas "gonum.org/v1/gonum/blas/gonum"
)

// This file holds the parts of SGD that both engines share, so that a seeded
// run visits the same examples with the same masks and steps in either.

// sampler draws the example order of each pass and the s-dropout masks from
// the seed. Each pass gets a fresh uniform permutation from its own stream,
// so the order of pass j depends on nothing but (Seed, j). The mask of the
// example at position pos of pass j is drawn from a stream keyed by
// (Seed, j, pos) alone, so two runs on neighbouring data sets with the same
// seed use the same permutations and the same coordinate orders at every step:
// the coupling under which the stability bounds hold. (One sequential stream
// would not do: how many coordinates a mask drops depends on the row, so the
// differing example would shift every later mask.)
type sampler struct {
	seed  uint64
	order []int
	pcg   rand.PCG   // reseeded per pass and per masked example
	rng   *rand.Rand // draws from pcg
	coord []int      // scratch for dropout
}

// maskSalt separates the dropout streams from the permutation streams.
const maskSalt = 0x6d61736b_64726f70

func newSampler(p *problem) *sampler {
	s := &sampler{seed: p.cfg.Seed, order: make([]int, p.n), coord: make([]int, p.d)}
	s.rng = rand.New(&s.pcg)
	return s
}

// pass returns the example order of pass j (0-based). The slice is reused.
func (s *sampler) pass(j int) []int {
	for i := range s.order {
		s.order[i] = i
	}
	s.pcg.Seed(s.seed, uint64(j)+1)
	shuffle(s.rng, s.order)
	return s.order
}

// dropout writes into dst the row x with coordinates dropped in a uniformly
// random order until ||dst|| <= frac*||x|| (the paper's Definition 14,
// guaranteed on every call, not in expectation), and returns ||dst||. norm is
// ||x||; pass and pos locate the example (pass j, position in its order) and
// key the random order. With frac >= 1 it copies x.
func (s *sampler) dropout(dst, x []float64, norm, frac float64, pass, pos int) float64 {
	copy(dst, x)
	if frac >= 1 || norm == 0 {
		return norm
	}
	s.pcg.Seed(s.seed^maskSalt, uint64(pass)<<32|uint64(pos))
	target := frac * frac * norm * norm
	rem := norm * norm
	for i := range s.coord {
		s.coord[i] = i
	}
	for j := 0; j < len(dst) && rem > target; j++ {
		r := j + s.rng.IntN(len(dst)-j)
		s.coord[j], s.coord[r] = s.coord[r], s.coord[j]
		c := s.coord[j]
		rem -= dst[c] * dst[c]
		dst[c] = 0
		if rem <= target {
			// Recompute exactly, so rounding cannot break the guarantee.
			rem = sqNorm(dst)
		}
	}
	return math.Sqrt(rem)
}

// sqNorm returns ||v||^2 with gonum's native BLAS dot product, whose
// partial sums do not wait on each other as one running sum does (it is on
// the critical path of a projected step).
func sqNorm(v []float64) float64 {
	return gonumblas.Implementation{}.Ddot(len(v), v, 1, v, 1)
}
