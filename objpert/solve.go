package objpert

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
)

// SolveStats are statistics of one minimization: they depend on the data
// and the noise, and are never published.
type SolveStats struct {
	NewtonSteps   int
	GradientSteps int
	// GradNorm is ||grad F|| at the returned weights; Reached reports
	// GradNorm <= GradTol.
	GradNorm float64
	Reached  bool
}

// objective evaluates F(w) = (1/n) sum_i l(W x_i, y_i) + (lambda/2)||w||^2
// + <b, w>/n on the rows of X.
type objective struct {
	X      *mat.Dense
	y      []float64
	loss   losses.Loss
	n, d   int
	k      int
	lambda float64
	b      []float64 // nil: no linear term
	// scratch
	z, g *mat.Dense
	zi   []float64
	gi   []float64
}

func newObjective(X *mat.Dense, y []float64, loss losses.Loss, k int, lambda float64, b []float64) *objective {
	n, d := X.Dims()
	return &objective{X: X, y: y, loss: loss, n: n, d: d, k: k, lambda: lambda, b: b,
		z: mat.NewDense(n, k, nil), g: mat.NewDense(n, k, nil), zi: make([]float64, k), gi: make([]float64, k)}
}

// margins sets o.z = X W^T.
func (o *objective) margins(w []float64) {
	W := mat.NewDense(o.k, o.d, w)
	o.z.Mul(o.X, W.T())
}

// eval returns F(w) and, if grad is not nil, writes grad F(w) into it.
func (o *objective) eval(w, grad []float64) float64 {
	o.margins(w)
	var sum float64
	for i := range o.n {
		copy(o.zi, o.z.RawRowView(i))
		if grad != nil {
			sum += o.loss.Grad(o.gi, o.zi, o.y[i])
			o.g.SetRow(i, o.gi)
		} else {
			sum += o.loss.Value(o.zi, o.y[i])
		}
	}
	nf := float64(o.n)
	f := sum/nf + o.lambda/2*floats.Dot(w, w)
	if o.b != nil {
		f += floats.Dot(o.b, w) / nf
	}
	if grad != nil {
		G := mat.NewDense(o.k, o.d, grad)
		G.Mul(o.g.T(), o.X)
		floats.Scale(1/nf, grad)
		floats.AddScaled(grad, o.lambda, w)
		if o.b != nil {
			floats.AddScaled(grad, 1/nf, o.b)
		}
	}
	return f
}

// hessian returns the Hessian of F at w: (1/n) sum_i H_i kron x_i x_i^T +
// lambda I, the (k d) x (k d) matrix in the row-major layout of w.
func (o *objective) hessian(w []float64) *mat.SymDense {
	o.margins(w)
	k, d, n := o.k, o.d, o.n
	hz := make([][]float64, n) // K x K margin Hessian of each row
	hi := make([]float64, k*k)
	for i := range n {
		copy(o.zi, o.z.RawRowView(i))
		o.loss.Hess(hi, o.zi, o.y[i])
		hz[i] = append([]float64(nil), hi...)
	}
	p := k * d
	H := mat.NewSymDense(p, nil)
	scaled := mat.NewDense(n, d, nil)
	var blk mat.Dense
	for a := range k {
		for c := a; c < k; c++ {
			for i := range n {
				row := scaled.RawRowView(i)
				copy(row, o.X.RawRowView(i))
				floats.Scale(hz[i][a*k+c]/float64(n), row)
			}
			blk.Reset()
			blk.Mul(o.X.T(), scaled)
			for j := range d {
				for m := range d {
					r, s := a*d+j, c*d+m
					if r <= s {
						H.SetSym(r, s, blk.At(j, m))
					}
				}
			}
		}
	}
	for i := range p {
		H.SetSym(i, i, H.At(i, i)+o.lambda)
	}
	return H
}

// minimize runs Newton's method with Armijo backtracking from w (in place)
// for at most maxNewton steps, then at most fallback gradient steps of
// size step (fallback < 0: as many as it takes), stopping at the first
// iterate with ||grad F|| <= tol. Every Newton step decreases F, so the
// gradient steps start from a point with F <= F(w0). With fallback >= 0
// the number of steps is fixed in advance and reaching tol or not is
// reported in the statistics; with fallback < 0 the loop ends only at tol
// or when ctx is done (an error).
func (o *objective) minimize(ctx context.Context, w []float64, tol float64, maxNewton, fallback int, step float64) (SolveStats, error) {
	p := len(w)
	g := make([]float64, p)
	trial := make([]float64, p)
	var st SolveStats
	f := o.eval(w, g)
	gn := floats.Norm(g, 2)
	newton := p <= MaxNewtonDim
	dir := mat.NewVecDense(p, nil)
	for it := 0; newton && it < maxNewton && gn > tol; it++ {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		var chol mat.Cholesky
		if !chol.Factorize(o.hessian(w)) {
			break // not positive definite in floating point: gradient steps
		}
		if err := chol.SolveVecTo(dir, mat.NewVecDense(p, g)); err != nil {
			break
		}
		slope := floats.Dot(dir.RawVector().Data, g)
		if !(slope > 0) {
			break
		}
		t := 1.0
		accepted := false
		for ; t > 1e-12; t /= 2 {
			copy(trial, w)
			floats.AddScaled(trial, -t, dir.RawVector().Data)
			if ft := o.eval(trial, nil); ft <= f-1e-4*t*slope {
				f = ft
				accepted = true
				break
			}
		}
		if !accepted {
			break
		}
		copy(w, trial)
		f = o.eval(w, g)
		gn = floats.Norm(g, 2)
		st.NewtonSteps++
	}
	for s := 0; (fallback < 0 || s < fallback) && gn > tol; s++ {
		if s%64 == 0 {
			if err := ctx.Err(); err != nil {
				return st, err
			}
		}
		floats.AddScaled(w, -step, g)
		o.eval(w, g)
		gn = floats.Norm(g, 2)
		st.GradientSteps++
	}
	st.GradNorm, st.Reached = gn, gn <= tol
	if math.IsNaN(gn) || math.IsInf(gn, 0) {
		return st, fmt.Errorf("objpert: the gradient norm is %v", gn)
	}
	return st, nil
}

// maxNewton is the number of Newton steps before the gradient steps take
// over (a constant: Newton reaches GradTol in a few dozen steps on every
// problem the tests and experiments met).
const maxNewton = 100
