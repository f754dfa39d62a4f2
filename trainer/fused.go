package trainer

import (
	"context"
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/internal/hugepage"
	"github.com/stabpriv/stabpriv/internal/kernel"
)

// passFused is pass for K = 1 and b = 1 without dropout or projection (the
// common case, e.fuse): the same steps as step, in the same order, as one
// loop that keeps the margin and the step size in locals instead of going
// through e's fields and methods on every step. Per step it
//   - takes the margin z, which the previous step's kernel computed (dot
//     only on the first row), and its clipped derivative g;
//   - updates w = prox(a w - eta g x) and computes the next row's margin in
//     the same loop, so a step reads the weights once: kernel.ShrinkDot up
//     to gatherMaxD features, whose margins the model files pinned by
//     package cmd/stabpriv were computed with; beyond, kernel.ShrinkDdot,
//     whose margins are dot's: such rows were trained by the
//     example-by-example step before passFused took them, and keep its bits
//     (TestPassFusedWideMatchesStep). It takes them only where dot is
//     gonum's amd64 assembly (gonumDdotPairs).
//
// Rows are read in place, with the row, norm and label of the example
// fusedAhead positions on hinted to the cache at every step
// (kernel.PrefetchExample), unless they take fusedBlockMinBytes or more
// and do not lie on huge pages (rowsOnHugePages; package trainer and
// datasets/preprocess advise the matrices they build onto them,
// hugepage.Advise; the command's reader does not, see datasets). Then they are read from copies made block by block
// (rowBlock.gather):
// the next fblock examples of the pass order are copied, in that order,
// into the other of two buffers when the step before the block needs its
// first row, and the steps read their rows one after another from a buffer
// that fits in the L2 cache. A pass over rows that large is bound by their
// random reads (each row on its own page: a TLB miss, then a cache miss);
// issued as one burst of independent hints per block, these overlap each
// other, where hints spread over the steps a fixed distance ahead
// overlapped less (BenchmarkEpochOverStream1Mx100, docs/PERFORMANCE.md).
// On huge pages a random row costs its cache miss alone, which the hints
// ahead cover, and the copies would only add work.
// The copies hold the rows' bits, so a step computes the same either way
// (TestPassFusedBlocks). A Constant schedule's step size is computed once
// per pass, and without a clip bound no step reads or hints the norms. The update is the Step's: its move (the one updateOneGLM
// makes, without a projection), fused with the next margin, then Average.
func (e *native) passFused(ctx context.Context, order []int) (lo, hi float64, err error) {
	p, d, n, sgd := e.p, e.d, len(order), e.sgd
	w := e.w[:d]
	lo = math.Inf(1)
	if n == 0 {
		return lo, 0, nil
	}
	var eta float64
	constant := p.cfg.Schedule == Constant
	if constant {
		if eta, err = sgd.Eta(e.t + 1); err != nil {
			return 0, 0, err
		}
		lo, hi = eta, eta
	}
	// Without a clip bound a step reads no norm (ClipScale is 1, and g*1
	// is g), and the hints fetch the label's line again instead: a load
	// that misses the cache holds up every later step, even one whose
	// value no step waits for.
	clip := sgd.clip > 0
	hintNorm := p.norm
	if !clip {
		hintNorm = p.y
	}
	// ddot: the margins in dot's order (kernel.ShrinkDdot).
	ddot := d > gatherMaxD
	// The examples are read from xs, ns and ys: at their index i in place,
	// or at their position q in the block cur when blk > 0.
	xs, ns, ys := p.x, p.norm, p.y
	blk := e.fblock
	cur, nxt := &e.fbuf[0], &e.fbuf[1]
	r := order[0]
	if blk > 0 {
		cur.gather(p, order[:min(blk, n)])
		xs, ns, ys, r = cur.x, cur.norm, cur.y, 0
	} else {
		for _, i := range order[:min(fusedAhead, n)] {
			kernel.PrefetchExample(&p.x[i*d], d, &hintNorm[i], &p.y[i])
		}
	}
	// The order of the next pass, drawn a round of fusedShuffle swaps
	// every fusedShuffle steps (orderAhead).
	a := e.ahead
	ahead := a != nil && e.j+1 < p.cfg.Passes
	drawing := ahead
	if ahead {
		a.start(e.smp.seed, e.j+1)
	}
	z := dot(w, xs[r*d:(r+1)*d])
	q := 0 // position in cur
	for s, i := range order {
		r = i
		if blk > 0 {
			if q == blk {
				cur, nxt, q = nxt, cur, 0
				xs, ns, ys = cur.x, cur.norm, cur.y
			}
			r = q
		} else if s+fusedAhead < n {
			j := order[s+fusedAhead]
			kernel.PrefetchExample(&p.x[j*d], d, &hintNorm[j], &p.y[j])
		}
		if drawing && s%fusedShuffle == 0 {
			drawing = a.round(fusedShuffle)
		}
		e.t++
		if !constant {
			if eta, err = sgd.Eta(e.t); err != nil {
				return 0, 0, err
			}
			lo, hi = min(lo, eta), max(hi, eta)
		}
		if e.t%ctxSteps == 0 {
			if err := ctx.Err(); err != nil {
				return 0, 0, fmt.Errorf("trainer: stopped at step %d: %w", e.t, err)
			}
		}
		x := xs[r*d : (r+1)*d]
		g := e.margin.Deriv(z, ys[r])
		if clip {
			g *= sgd.ClipScale(math.Abs(g) * ns[r])
		}
		if e.obs != nil && e.obs.example != nil {
			e.gz[0] = g
			e.obs.example(e.t, i, x, e.gz)
		}
		a, thr := sgd.decay(eta)
		if s+1 < n {
			var next []float64
			switch j := order[s+1]; {
			case blk == 0:
				next = p.x[j*d : (j+1)*d]
			case q+1 < blk:
				next = cur.x[(q+1)*d : (q+2)*d]
			default:
				nxt.gather(p, order[s+1:min(s+1+blk, n)])
				next = nxt.x[:d]
			}
			if ddot {
				z = kernel.ShrinkDdot(w, x, a, eta*g, thr, next)
			} else {
				z = kernel.ShrinkDot(w, x, a, eta*g, thr, next)
			}
		} else {
			sgd.move(w, eta, eta*g, x)
		}
		q++
		if e.avg != nil {
			sgd.Average(e.avg, e.w, e.t)
		}
		if e.obs != nil && e.obs.step != nil {
			e.obs.step(e.t, eta, e.w)
		}
	}
	if ahead {
		for drawing {
			drawing = a.round(shuffleAhead)
		}
		a.done = true
	}
	return lo, hi, nil
}

// rowBlock is one of passFused's two buffers: copies of the rows, norms and
// labels of consecutive positions of a pass order.
type rowBlock struct {
	x, norm, y []float64
}

// newRowBlock returns a buffer for m examples of d features.
func newRowBlock(m, d int) rowBlock {
	return rowBlock{x: make([]float64, m*d), norm: make([]float64, m), y: make([]float64, m)}
}

// gather copies the rows, norms and labels of the examples idx (at most
// the buffer's size) into b, in order. It first hints the first cache line
// of every row and the norm and label of every example, so that the page
// walks and cache misses of the whole block overlap, then copies.
func (b *rowBlock) gather(p *problem, idx []int) {
	d := p.d
	for _, i := range idx {
		kernel.PrefetchExample(&p.x[i*d], 1, &p.norm[i], &p.y[i])
	}
	for q, i := range idx {
		copy(b.x[q*d:(q+1)*d], p.x[i*d:(i+1)*d])
		b.norm[q], b.y[q] = p.norm[i], p.y[i]
	}
}

// fusedBlock returns the number of examples of each of passFused's two
// buffers for n rows of d features: 0 (rows read in place) when the rows
// take less than fusedBlockMinBytes or huge reports that they lie on huge
// pages (it is called only for rows that large), otherwise as many rows as
// fit in fusedBlockFloats float64s, at least one, at most n. The buffers
// hold at most 2 (max(fusedBlockFloats, d) + 2 fusedBlock) float64s: 130
// kB at d = 100, whatever n.
func fusedBlock(n, d int, huge func() bool) int {
	if 8*float64(n)*float64(d) < fusedBlockMinBytes || huge() {
		return 0
	}
	return min(n, max(1, fusedBlockFloats/d))
}

// The sizes of passFused's blocks. Each buffer holds fusedBlockFloats
// float64s of rows (64 kB): BenchmarkEpochOverStream1Mx100 timed blocks of
// 8,192 floats faster than of 32,768 and 131,072. Rows that take less than
// fusedBlockMinBytes (256 MiB) are read in place (larger ones too on huge
// pages, rowsOnHugePages): on 4 kB pages their page
// tables take less than 512 kB, the TLB misses of random rows cost little,
// and copies only add work (BenchmarkPass100kx100/b=1, 80 MB, timed 1.3
// times slower with them; BenchmarkEpochOverStream1Mx100, 800 MB, faster).
// Variables, so that the tests can take other sizes.
var (
	fusedBlockFloats   = 1 << 13
	fusedBlockMinBytes = float64(1 << 28)
)

// rowsOnHugePages reports whether most of the bytes of the rows x lie on
// huge pages (hugepage.Share): there a random row costs no page walk, and
// passFused reads rows of any size in place, which
// BenchmarkEpochOverStream1Mx100 timed faster than the copies by blocks
// (which still pay for the copy). A variable, so that the tests can fix it.
var rowsOnHugePages = func(x []float64) bool { return hugepage.Share(x) >= 0.5 }

// fusedAhead is how many examples ahead of the current one passFused hints
// the processor to fetch when it reads the rows in place: enough steps to
// cover a memory latency, few enough that the hints in flight do not wait
// for each other. Distances from 8 to 24 timed the same in
// BenchmarkNativePass36000x33; on rows of 800 MB on huge pages
// (BenchmarkEpochOverStream1Mx100) 4 took 5% less CPU time per epoch than
// 16, and on 4 kB pages (BenchmarkPass100kx100/b=1,
// BenchmarkNativePass36000x33) the two timed the same.
const fusedAhead = 4

// fusedShuffle is the number of swaps of the next pass's order that
// passFused makes at once, every fusedShuffle steps: one per step on
// average, so that the order is whole at the end of the pass, in rounds
// small enough that they run while the steps wait on their arithmetic.
const fusedShuffle = 16
