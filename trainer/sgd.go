package trainer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	gonumblas "gonum.org/v1/gonum/blas/gonum"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/internal/kernel"
	"github.com/stabpriv/stabpriv/losses"
)

// This file holds the parts of SGD that both engines share, so that a seeded
// run visits the same examples with the same masks and steps in either.

// step returns eta_t for step t >= 1 and checks it is finite and positive.
func (p *problem) step(t int) (float64, error) {
	var eta float64
	switch p.cfg.Schedule {
	case Constant:
		eta = p.cfg.Eta
		if eta == 0 {
			if p.beta <= 0 {
				return 0, fmt.Errorf("%w: no smoothness constant to default the step size; set Eta", ErrConfig)
			}
			eta = 1 / p.beta
		}
	case InverseT:
		eta = 1 / (p.mu * float64(t))
	case BoundedInverseT:
		eta = 1 / (p.mu * float64(t))
		if p.beta > 0 {
			eta = math.Min(eta, 1/p.beta)
		}
	case Custom:
		eta = p.cfg.StepFunc(t)
	}
	if !check.Positive(eta) {
		return 0, fmt.Errorf("%w: step size %v at step %d, want finite > 0", ErrConfig, eta, t)
	}
	return eta, nil
}

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
	s.rng.Shuffle(len(s.order), func(a, b int) { s.order[a], s.order[b] = s.order[b], s.order[a] })
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

// clipScale returns the factor in (0, 1] that scales a per-example gradient
// of L2 norm gnorm to norm at most clip (clip = 0: no clipping).
func clipScale(gnorm, clip float64) float64 {
	if clip > 0 && gnorm > clip {
		return clip / gnorm
	}
	return 1
}

// project scales w onto the ball ||w|| <= radius (radius = 0: no projection).
func project(w []float64, radius float64) {
	if radius <= 0 {
		return
	}
	if n := math.Sqrt(sqNorm(w)); n > radius {
		s := radius / n
		for i := range w {
			w[i] *= s
		}
	}
}

// average folds the iterate w, the t-th (1-based), into the running mean avg.
func average(avg, w []float64, t int) {
	f := 1 / float64(t)
	for i, v := range w {
		avg[i] += (v - avg[i]) * f
	}
}

// sqNorm returns ||v||^2 with gonum's native BLAS dot product, whose
// partial sums do not wait on each other as one running sum does (it is on
// the critical path of a projected step).
func sqNorm(v []float64) float64 {
	return gonumblas.Implementation{}.Ddot(len(v), v, 1, v, 1)
}

// objective returns F_S(w) and the norm of the minimum-norm subgradient of
// F_S at w, using the built-in loss. grad is scratch of length k*d and z of
// length k.
//
// The margins, the loss and the gradient sum take the rows in order
// through the kernels of internal/kernel: for K > 1 four at a time with
// the bits of the one-row loops (each margin summed in column order from
// 0, each product rounded); for K = 1 in blocks (objectiveRows1: each
// margin from four partial sums in gonum Ddot's order, each product fused
// into its sum). grad gets gz_k(x_i)/n times row i for i = 0, 1, ... in
// turn, and the losses are summed in row order. From
// objectiveSplitRows rows on, the rows are cut into objectiveParts fixed
// parts (at multiples of 4) summed concurrently, each in that order, and
// the parts' sums are added in part order: the result depends on n alone,
// not on GOMAXPROCS or the scheduling.
func (p *problem) objective(w, grad, z, gz []float64) (f, gnorm float64) {
	n := p.n
	if n < objectiveSplitRows {
		f = p.objectiveRows(0, n, w, grad, z, gz)
	} else {
		fs := make([]float64, objectiveParts)
		grads := make([][]float64, objectiveParts)
		grads[0] = grad
		var wg sync.WaitGroup
		for j := 1; j < objectiveParts; j++ {
			grads[j] = make([]float64, len(grad))
			wg.Add(1)
			go func() {
				defer wg.Done()
				fs[j] = p.objectiveRows(objectivePart(n, j), objectivePart(n, j+1), w, grads[j], make([]float64, len(z)), make([]float64, len(gz)))
			}()
		}
		fs[0] = p.objectiveRows(0, objectivePart(n, 1), w, grad, z, gz)
		wg.Wait()
		f = fs[0]
		for j := 1; j < objectiveParts; j++ {
			f += fs[j]
			for c, v := range grads[j] {
				grad[c] += v
			}
		}
	}
	f /= float64(n)
	f += p.cfg.Reg.Value(w)
	gnorm = p.cfg.Reg.MinNormSubgrad(grad, grad, w)
	return f, gnorm
}

// The objective pass over many rows runs in objectiveParts parts.
const (
	objectiveSplitRows = 1 << 16
	objectiveParts     = 2
)

// objectivePart returns the first row of part j of n rows (n for j =
// objectiveParts), a multiple of 4 below it.
func objectivePart(n, j int) int {
	if j >= objectiveParts {
		return n
	}
	return (n * j / objectiveParts) &^ 3
}

// objectiveRows sets grad to the sum over rows lo..hi-1 of gz_k(x_i)/n times
// row i, in order, and returns the sum of their losses (objective's loop).
func (p *problem) objectiveRows(lo, hi int, w, grad, z, gz []float64) (f float64) {
	clear(grad)
	if p.k == 1 {
		return p.objectiveRows1(lo, hi, w, grad, gz)
	}
	n, d, k := p.n, p.d, p.k
	zb := make([]float64, 4*k)  // the K margins of each of four rows
	cb := make([][4]float64, k) // cb[c][q]: output c's coefficient of row q
	i := lo
	for ; i+4 <= hi; i += 4 {
		x0, x1, x2, x3 := p.x[i*d:(i+1)*d], p.x[(i+1)*d:(i+2)*d], p.x[(i+2)*d:(i+3)*d], p.x[(i+3)*d:(i+4)*d]
		for c := 0; c < k; c++ {
			s := kernel.SeqDots4(w[c*d:(c+1)*d], x0, x1, x2, x3)
			for q, v := range s {
				zb[q*k+c] = v
			}
		}
		for q := 0; q < 4; q++ {
			f += p.loss.Grad(gz, zb[q*k:(q+1)*k], p.y[i+q])
			for c := 0; c < k; c++ {
				cb[c][q] = gz[c] / float64(n)
			}
		}
		for c := 0; c < k; c++ {
			kernel.AddRows4(grad[c*d:(c+1)*d], cb[c], x0, x1, x2, x3)
		}
	}
	for ; i < hi; i++ {
		x := p.x[i*d : (i+1)*d]
		for c := 0; c < k; c++ {
			var s float64
			for j, v := range w[c*d : (c+1)*d] {
				s += float64(v * x[j])
			}
			z[c] = s
		}
		f += p.loss.Grad(gz, z, p.y[i])
		for c := 0; c < k; c++ {
			g := gz[c] / float64(n)
			row := grad[c*d : (c+1)*d]
			for j, v := range x {
				row[j] += float64(g * v)
			}
		}
	}
	return f
}

// objectiveBlock is the number of rows of a block of objectiveRows1.
const objectiveBlock = 64

// objectiveRows1 is objectiveRows for K = 1 in blocks of objectiveBlock
// rows, each read once while it is in cache: the margins by
// kernel.FusedDots (gonum Ddot's order, each product fused into its sum),
// the losses and derivatives (for the logistic loss from the parts of
// kernel.LogisticParts, with the bits of Logistic.Grad, else row by row),
// and the block added into grad by kernel.FusedAddRows (the rows in
// order, fused).
func (p *problem) objectiveRows1(lo, hi int, w, grad, gz []float64) (f float64) {
	var buf [5 * objectiveBlock]float64
	z, c := buf[:objectiveBlock], buf[objectiveBlock:2*objectiveBlock]
	plus, e := buf[2*objectiveBlock:3*objectiveBlock], buf[3*objectiveBlock:4*objectiveBlock]
	d2 := buf[4*objectiveBlock:] // unused
	d, nf := p.d, float64(p.n)
	_, logistic := p.loss.(losses.Logistic)
	var zs [1]float64
	zi := zs[:]
	for b0 := lo; b0 < hi; b0 += objectiveBlock {
		m := min(objectiveBlock, hi-b0)
		blk, y := p.x[b0*d:], p.y[b0:b0+m]
		kernel.FusedDots(z[:m], w, blk, d)
		if logistic {
			kernel.LogisticParts(z[:m], y, plus, e, c, d2)
			for r := range m {
				// Logistic.Grad: the value plus + log1p(e)
				f += plus[r] + math.Log1p(e[r])
				c[r] /= nf
			}
		} else {
			for r := range m {
				zi[0] = z[r]
				f += p.loss.Grad(gz, zi, y[r])
				c[r] = gz[0] / nf
			}
		}
		kernel.FusedAddRows(grad, c[:m], blk, d)
	}
	return f
}
