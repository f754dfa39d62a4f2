package pdp

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// chunkRows is the number of rows whose H^{-1} U are solved together.
const chunkRows = 2048

// batch computes the one-step differences of count specs (spec(i)), with
// their error bounds, and calls emit(i, ds) with those of spec i (ds[t]
// is its neighbour t), from GOMAXPROCS goroutines at once. Per
// chunk of specs, one triangular solve pair for all their points, the
// updates at O(r^2 K^2 d) each, and one product of Gw with all their
// differences for the bounds: O(count K^2 d^2) in all, spread over
// GOMAXPROCS goroutines. With keepV, the differences of a chunk share one
// backing array of their own (their V are slices of it), which emit may
// keep; without, each goroutine reuses its chunks' memory (ds and the V
// in it) for its next chunk, so emit must copy what it keeps out of ds
// and not keep V: the working memory is then O(GOMAXPROCS chunkRows K d)
// whatever count, where fresh chunks made the collector hold several
// times the rows (a pass over 800,000 rows allocated 1.5 GB).
func (a *Analysis) batch(count int, spec func(i int) (nbSpec, error), emit func(i int, ds []Diff), keepV bool) error {
	type job struct{ lo, hi int }
	jobs := make(chan job)
	errs := make([]error, count)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var sc batchScratch
			for jb := range jobs {
				a.chunk(jb.lo, jb.hi, spec, emit, keepV, &sc, errs)
			}
		})
	}
	for lo := 0; lo < count; lo += chunkRows {
		jobs <- job{lo, min(lo+chunkRows, count)}
	}
	close(jobs)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// batchScratch is the memory one goroutine of batch reuses from chunk to
// chunk.
type batchScratch struct {
	upd   updScratch
	basis basisScratch
	specs []nbSpec
	pts   [][]float64
	vs    []float64 // V of the chunk's differences, unless kept
	owns  []float64
	diffs []Diff // the chunk's differences, unless kept
	out   [][]Diff
	gv    []float64 // boundChunk's product
}

// chunk is batch on the specs lo to hi (a job), an error in errs.
func (a *Analysis) chunk(lo, hi int, spec func(i int) (nbSpec, error), emit func(i int, ds []Diff), keepV bool, sc *batchScratch, errs []error) {
	p := a.p
	sc.specs, sc.pts = sc.specs[:0], sc.pts[:0]
	nd := 0
	for i := lo; i < hi; i++ {
		sp, err := spec(i)
		if err != nil {
			errs[i] = err
			return
		}
		sc.specs = append(sc.specs, sp)
		sc.pts = append(sc.pts, sp.pts...)
		nd += len(sp.sets)
	}
	bt, err := a.basisRowsInto(sc.pts, &sc.basis)
	if err != nil {
		errs[lo] = err
		return
	}
	dim := p.dim()
	var vs []float64
	var diffs []Diff
	if keepV {
		vs, diffs = make([]float64, nd*dim), make([]Diff, nd)
	} else {
		sc.vs, sc.diffs = slices.Grow(sc.vs[:0], nd*dim)[:nd*dim], slices.Grow(sc.diffs[:0], nd)[:nd]
		vs, diffs = sc.vs, sc.diffs
	}
	owns := sc.owns[:0]
	out := slices.Grow(sc.out[:0], len(sc.specs))[:len(sc.specs)]
	col, o := 0, 0
	for s, sp := range sc.specs {
		out[s] = diffs[o : o+len(sp.sets) : o+len(sp.sets)]
		for t, rows := range sp.sets {
			d, own, err := a.update(sp.pts, rows, bt, col, &sc.upd, vs[o*dim:][:dim:dim])
			if err != nil {
				errs[lo+s] = fmt.Errorf("row %d: %w", lo+s, err)
				return
			}
			out[s][t] = d
			owns = append(owns, own)
			o++
		}
		col += len(sp.pts) * p.k
	}
	sc.owns, sc.out = owns, out
	sc.gv = a.boundChunk(out, vs, owns, sc.gv)
	for s, ds := range out {
		emit(lo+s, ds)
	}
}

// boundChunk sets the error bounds of a chunk's differences (owns in the
// order of the differences, vs their V one after the other): the
// quadratic forms of Gw as one matrix product, vs seen as the matrix of
// the differences' K blocks of d, one a row, times Gw, written into buf
// (grown when short), which it returns.
func (a *Analysis) boundChunk(diffs [][]Diff, vs, owns, buf []float64) []float64 {
	if a.gw == nil {
		for _, ds := range diffs {
			for t := range ds {
				a.oneStepBound(&ds[t], 0, 0)
			}
		}
		return buf
	}
	p := a.p
	blocks := len(vs) / p.d
	if blocks == 0 {
		return buf
	}
	vd := mat.NewDense(blocks, p.d, vs)
	buf = slices.Grow(buf[:0], blocks*p.d)[:blocks*p.d]
	gv := mat.NewDense(blocks, p.d, buf)
	gv.Mul(vd, a.gw)
	o := 0
	for _, ds := range diffs {
		for t := range ds {
			var base float64
			for c := range p.k {
				r := o*p.k + c
				base += floats.Dot(vd.RawRowView(r), gv.RawRowView(r))
			}
			a.oneStepBound(&ds[t], base, owns[o])
			o++
		}
	}
	return buf
}

// RemoveAll returns the one-step estimate (see Remove) for every row, in
// row order, with its error bound (batch).
func (a *Analysis) RemoveAll() ([]Diff, error) {
	return a.firstOfAll(a.p.n, func(i int) (nbSpec, error) { return a.removeSpec(i), nil }, true)
}

// RemoveNorms is RemoveAll without the differences' vectors (V nil, Dim
// set): their norms, bounds (Diff.Upper, ReplaceBound) and epsilons are
// RemoveAll's, at O(1) memory a row instead of O(K d). RefineTop refines
// them as it does RemoveAll's.
func (a *Analysis) RemoveNorms() ([]Diff, error) {
	return a.firstOfAll(a.p.n, func(i int) (nbSpec, error) { return a.removeSpec(i), nil }, false)
}

// FlipAll returns ReplaceFlip for every row, in row order (batch).
func (a *Analysis) FlipAll() ([]Diff, error) {
	return a.firstOfAll(a.p.n, func(i int) (nbSpec, error) { return a.flipSpec(i), nil }, true)
}

// FlipNorms is FlipAll without the differences' vectors (see
// RemoveNorms).
func (a *Analysis) FlipNorms() ([]Diff, error) {
	return a.firstOfAll(a.p.n, func(i int) (nbSpec, error) { return a.flipSpec(i), nil }, false)
}

// FlipSensitivities returns FlipNorms' sensitivities, the L2 of each row's
// difference in row order, alone: 8 bytes a row where a Diff takes 104
// (83 MB at 800,000 rows).
func (a *Analysis) FlipSensitivities() ([]float64, error) {
	out := make([]float64, a.p.n)
	err := a.batch(a.p.n, func(i int) (nbSpec, error) { return a.flipSpec(i), nil }, func(i int, ds []Diff) { out[i] = ds[0].L2 }, false)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RemoveNormsFlips returns RemoveNorms and FlipSensitivities together, bit
// for bit, from one batch over the rows: each row's point is solved once
// (H^{-1} U) for both of its neighbours, the row removed and the row with
// its label flipped, where the two calls solve it twice.
func (a *Analysis) RemoveNormsFlips() ([]Diff, []float64, error) {
	n := a.p.n
	diffs, flips := make([]Diff, n), make([]float64, n)
	err := a.batch(n, func(i int) (nbSpec, error) { return a.removeFlipSpec(i), nil }, func(i int, ds []Diff) {
		diffs[i], flips[i] = ds[0], ds[1].L2
		diffs[i].V = nil
	}, false)
	if err != nil {
		return nil, nil, err
	}
	return diffs, flips, nil
}

// AddAll returns Add for every row of x (labels y), in order (batch).
func (a *Analysis) AddAll(x *mat.Dense, y []float64) ([]Diff, error) { return a.addAll(x, y, true) }

// AddNorms is AddAll without the differences' vectors (see RemoveNorms);
// RefineTopTargets refines them as it does AddAll's.
func (a *Analysis) AddNorms(x *mat.Dense, y []float64) ([]Diff, error) { return a.addAll(x, y, false) }

// addAll is AddAll, with the vectors when keepV is set.
func (a *Analysis) addAll(x *mat.Dense, y []float64, keepV bool) ([]Diff, error) {
	n, err := a.checkTargets(x, y)
	if err != nil {
		return nil, err
	}
	return a.firstOfAll(n, func(i int) (nbSpec, error) {
		return nbSpec{pts: [][]float64{x.RawRowView(i)}, sets: [][]nbRow{{{0, y[i], 1}}}}, nil
	}, keepV)
}

// ReplaceAll returns Replace(rows[t], x_t, y_t) for every row t of x, in
// order (batch).
func (a *Analysis) ReplaceAll(rows []int, x *mat.Dense, y []float64) ([]Diff, error) {
	n, err := a.checkTargets(x, y)
	if err != nil {
		return nil, err
	}
	if len(rows) != n {
		return nil, fmt.Errorf("%w: %d rows to replace by %d", ErrInput, len(rows), n)
	}
	p := a.p
	return a.firstOfAll(n, func(t int) (nbSpec, error) {
		i := rows[t]
		if i < 0 || i >= p.n {
			return nbSpec{}, fmt.Errorf("%w: row %d of %d", ErrInput, i, p.n)
		}
		return nbSpec{pts: [][]float64{p.x.RawRowView(i), x.RawRowView(t)}, sets: [][]nbRow{{{0, p.y[i], -1}, {1, y[t], 1}}}}, nil
	}, true)
}

// firstOfAll is batch for specs of one neighbour each, in order; without
// keepV, the differences keep their norms and bounds, not V.
func (a *Analysis) firstOfAll(count int, spec func(i int) (nbSpec, error), keepV bool) ([]Diff, error) {
	out := make([]Diff, count)
	err := a.batch(count, spec, func(i int, ds []Diff) {
		out[i] = ds[0]
		if !keepV {
			out[i].V = nil
		}
	}, keepV)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkTargets checks a matrix of targets and their labels and returns
// their number.
func (a *Analysis) checkTargets(x *mat.Dense, y []float64) (int, error) {
	if x == nil || x.IsEmpty() {
		return 0, nil
	}
	n, _ := x.Dims()
	if len(y) != n {
		return 0, fmt.Errorf("%w: %d targets with %d labels", ErrInput, n, len(y))
	}
	for i := range n {
		if err := a.checkTarget(x.RawRowView(i), y[i]); err != nil {
			return 0, fmt.Errorf("target %d: %w", i, err)
		}
	}
	return n, nil
}
