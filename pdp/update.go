package pdp

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/pdp/internal/linalg"
)

// basisRows returns B^T for B = pointBasis(pts...), row-major (rK rows of
// K*d): row q K + c is H^{-1} U_q's column c, contiguous for update.
func (a *Analysis) basisRows(pts [][]float64) ([]float64, error) {
	var sc basisScratch
	return a.basisRowsInto(pts, &sc)
}

// basisScratch is the memory of basisRowsInto, reused by one goroutine.
type basisScratch struct {
	rhs, b, bt []float64
}

// basisRowsInto is basisRows in the memory of sc: the result is sc's
// until the next call. The solve is pointBasis's, in buffers of the same
// shape, so the bits are the same.
func (a *Analysis) basisRowsInto(pts [][]float64, sc *basisScratch) ([]float64, error) {
	p := a.p
	dim, cols := p.dim(), len(pts)*p.k
	sc.rhs = grow(sc.rhs, dim*cols)
	rhs := mat.NewDense(dim, cols, sc.rhs)
	for q, x := range pts {
		for c := 0; c < p.k; c++ {
			for j, v := range x {
				rhs.Set(c*p.d+j, q*p.k+c, v)
			}
		}
	}
	sc.b = slices.Grow(sc.b[:0], dim*cols)[:dim*cols]
	b := mat.NewDense(dim, cols, sc.b)
	if err := a.chol.SolveTo(b, rhs); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSingular, err)
	}
	sc.bt = slices.Grow(sc.bt[:0], cols*dim)[:cols*dim]
	bt := sc.bt
	for i := range dim {
		row := sc.b[i*cols : (i+1)*cols]
		for j, v := range row {
			bt[j*dim+i] = v
		}
	}
	return bt, nil
}

// updScratch is update's working memory, reused across calls by one
// goroutine.
type updScratch struct {
	z, g, s, s0, g0 []float64
	uniq            []int     // the distinct points of a neighbour's rows
	signs           []float64 // the sum of the signs of each point's rows
	gd, dm, m, coef []float64
	grad            []float64
}

// grow returns buf resized to n, zeroed.
func grow(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	buf = buf[:n]
	clear(buf)
	return buf
}

// update returns the one-step estimate of the change of w_hat for the
// neighbour whose objective is J + sum_q sign_q l(., (x_q, y_q)) over rows
// (points of pts), given bt = B^T (basisRows): row col0 + K pt + c holds
// column c of H^{-1} U for the point pt. V is written into v (length
// K*d), which the Diff keeps. It also returns own = sum_q sign_q ||x_q||
// ||U_q^T V||^2, the rows' share of the sum in oneStepBound.
//
// Rows on the same point (a label flip removes the row and adds its
// copy) are merged into one: its margin gradient and Hessian are the
// signed sums of theirs. The neighbour's Hessian at w_hat is
// H + U D U^T, U the distinct points' U_q side by side and D the
// block-diagonal matrix of their summed K x K margin Hessians; by the
// Woodbury identity its inverse times U is B (I + D M)^{-1} with
// M = U^T B, so no inverse of D is needed (the softmax S is singular, and
// a flip's D may vanish). One Newton step from w_hat on the neighbour's
// objective, whose gradient at w_hat is U gd (gd the summed margin
// gradients), moves by -B (I + D M)^{-1} gd. Leverage and Residual
// describe the first row. A removal that leaves a singular Hessian (with
// lambda = 0, no other row spans the removed row's direction) is an error
// wrapping ErrSingular.
func (a *Analysis) update(pts [][]float64, rows []nbRow, bt []float64, col0 int, sc *updScratch, v []float64) (Diff, float64, error) {
	p := a.p
	k, d, dim := p.k, p.d, p.dim()
	sc.z, sc.g, sc.s = grow(sc.z, k), grow(sc.g, k), grow(sc.s, k*k)
	sc.uniq, sc.signs = sc.uniq[:0], sc.signs[:0]
	for _, row := range rows {
		if u := indexOf(sc.uniq, row.pt); u < 0 {
			sc.uniq = append(sc.uniq, row.pt)
			sc.signs = append(sc.signs, 0)
		}
	}
	r := len(sc.uniq) * k
	sc.gd, sc.dm, sc.m, sc.coef = grow(sc.gd, r), grow(sc.dm, r*r), grow(sc.m, r*r), grow(sc.coef, r)
	gd, dm, m, coef := sc.gd, sc.dm, sc.m, sc.coef
	for q, row := range rows {
		x := pts[row.pt]
		u := indexOf(sc.uniq, row.pt)
		sc.signs[u] += row.sign
		p.obj.Margins(sc.z, a.sol.W, x)
		p.obj.MarginGrad(sc.g, sc.z, x, row.y)
		p.obj.MarginHess(sc.s, sc.z, x, row.y)
		for c := range k {
			gd[u*k+c] += row.sign * sc.g[c]
			for e := range k {
				dm[(u*k+c)*r+u*k+e] += row.sign * sc.s[c*k+e]
			}
		}
		if q == 0 {
			sc.s0, sc.g0 = append(sc.s0[:0], sc.s...), append(sc.g0[:0], sc.g...)
		}
	}
	// M[(u,c),(u2,c2)] = x_u . B[block c, column of (u2, c2)].
	for u, pu := range sc.uniq {
		x := pts[pu]
		for c := range k {
			for u2, pu2 := range sc.uniq {
				for c2 := range k {
					col := bt[(col0+pu2*k+c2)*dim+c*d:][:d]
					var acc float64
					for j, xv := range x {
						acc += xv * col[j]
					}
					m[(u*k+c)*r+u2*k+c2] = acc
				}
			}
		}
	}
	if err := solveSmall(r, dm, m, gd, coef); err != nil {
		return Diff{}, 0, err
	}
	clear(v)
	for u, pu := range sc.uniq {
		for c := range k {
			col, cf := bt[(col0+pu*k+c)*dim:][:dim], coef[u*k+c]
			for i, b := range col {
				v[i] += b * cf
			}
		}
	}
	for i := range v {
		v[i] = -v[i]
	}
	diff := Diff{V: v, Dim: dim, Leverage: math.NaN()}
	diff.L2, diff.L1 = norm2(v), norm1(v)
	if k == 1 {
		diff.Leverage = sc.s0[0] * m[0]
		diff.Residual = -sc.g0[0]
	} else {
		diff.Residual = norm2(sc.g0)
	}
	var own float64
	sc.grad = grow(sc.grad, dim)
	for u, pu := range sc.uniq {
		x := pts[pu]
		if sc.signs[u] != 0 {
			p.obj.Margins(sc.z, v, x)
			own += sc.signs[u] * norm2(x) * floats.Dot(sc.z, sc.z)
		}
		for c := range k {
			floats.AddScaled(sc.grad[c*d:(c+1)*d], gd[u*k+c], x)
		}
	}
	// ||grad J'(w_hat) - grad J(w_hat)||, scaled by oneStepBound.
	diff.SCBound = norm2(sc.grad)
	return diff, own, nil
}

// indexOf returns the position of v in s, or -1.
func indexOf(s []int, v int) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// solveSmall sets coef = (I + D M)^{-1} gd for the r x r matrices dm and m
// (row-major): in closed form for r = 1 and 2, by LU otherwise. A
// singular I + D M (condition number beyond linalg.MaxCond, 1-norm) is an
// error wrapping ErrSingular: the neighbour's Hessian at w_hat is
// singular.
func solveSmall(r int, dm, m, gd, coef []float64) error {
	switch r {
	case 1:
		den := 1 + dm[0]*m[0]
		if !(den > 1e-12) {
			return fmt.Errorf("%w: removing the row leaves a singular Hessian (1 - D2l x^T H^{-1} x = %.3g); use lambda > 0", ErrSingular, den)
		}
		coef[0] = gd[0] / den
		return nil
	}
	am := make([]float64, r*r)
	for i := range r {
		for j := range r {
			var acc float64
			for e := range r {
				acc += dm[i*r+e] * m[e*r+j]
			}
			if i == j {
				acc++
			}
			am[i*r+j] = acc
		}
	}
	if r == 2 {
		a00, a01, a10, a11 := am[0], am[1], am[2], am[3]
		det := a00*a11 - a01*a10
		norm := math.Max(math.Abs(a00)+math.Abs(a10), math.Abs(a01)+math.Abs(a11))
		inv := math.Max(math.Abs(a11)+math.Abs(a10), math.Abs(a01)+math.Abs(a00)) / math.Abs(det)
		if c := norm * inv; !(c < linalg.MaxCond) {
			return fmt.Errorf("%w: the neighbour's Hessian at w_hat is singular (condition %.3g of I + D M)", ErrSingular, c)
		}
		coef[0] = (a11*gd[0] - a01*gd[1]) / det
		coef[1] = (a00*gd[1] - a10*gd[0]) / det
		return nil
	}
	var lu mat.LU
	lu.Factorize(mat.NewDense(r, r, am))
	if c := lu.Cond(); !(c < linalg.MaxCond) {
		return fmt.Errorf("%w: the neighbour's Hessian at w_hat is singular (condition %.3g of I + D M)", ErrSingular, c)
	}
	var cv mat.VecDense
	if err := lu.SolveVecTo(&cv, false, mat.NewVecDense(r, gd)); err != nil {
		return fmt.Errorf("%w: the neighbour's Hessian is singular: %w", ErrSingular, err)
	}
	copy(coef, cv.RawVector().Data)
	return nil
}
