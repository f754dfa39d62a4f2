package glm

import "fmt"

// Grads writes into grads[b] the gradient of obs[b] at ws[b] for every b,
// with the bits of obs[b].Grad(grads[b], ws[b]), in one pass over the rows
// for all of them: each block of passRows rows of X is read from memory
// once, and every objective's margins, coefficients and sums run over it
// while it is in cache (a gradient pass over rows that do not fit in the
// cache is bound by reading them). The objectives must be neighbours of
// one objective, or the objective itself (they share X; a panic
// otherwise, a programmer error), each in at most one call at a time (a
// pass writes its objective's scratch).
//
// The bits are Grad's: each objective's rows are cut into the same fixed
// parts of X (the parts of rowPass, on goroutines from minPartRows rows
// on), each part's rows added in order, its own left-out row skipped and
// its extra rows added last; the kernels' results for a row do not depend
// on the block it is read in.
func Grads(obs []*Objective, grads, ws [][]float64) {
	if len(grads) != len(obs) || len(ws) != len(obs) {
		panic(fmt.Sprintf("glm: Grads of %d objectives with %d gradients and %d points", len(obs), len(grads), len(ws)))
	}
	if len(obs) == 0 {
		return
	}
	o := obs[0]
	fs := make([]blockFunc, len(obs))
	for b, ob := range obs {
		if ob.x != o.x {
			panic("glm: Grads of objectives on different rows")
		}
		ob.checkLen(grads[b], ws[b])
		ob.passScratch(true)
		fs[b] = ob.gradBlock(false)
	}
	parts := o.parts()
	sums := make([][rowParts]float64, len(obs))
	runParts(o.n, parts, func(p, lo, hi int) {
		for b, ob := range obs {
			clear(ob.partAcc(grads[b], p))
		}
		for b0 := lo; b0 < hi; b0 += passRows {
			b1 := min(b0+passRows, hi)
			for b, ob := range obs {
				ob.rowBlocks(ob.partAcc(grads[b], p), ws[b], p, b0, b1, fs[b], &sums[b][p])
			}
		}
	})
	for b, ob := range obs {
		sum := ob.addParts(grads[b], &sums[b], parts)
		if ob.e > 0 {
			sum = ob.extraRows(grads[b], ws[b], fs[b], sum)
		}
		ob.finish(ws[b], grads[b], sum, true)
	}
}

// Parallel returns the number of goroutines a pass over the rows of o
// (Grad, Grads, FuncGrad and the solver's) runs on: its fixed parts of
// the rows, 2 from 16384 rows of X on and 1 below. A caller running
// passes side by side can size its own goroutines by it.
func (o *Objective) Parallel() int { return o.parts() }
