package trainer

import (
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/glm"
)

// objective returns F_S(w) and the norm of the minimum-norm subgradient of
// F_S at w, using the built-in loss: the mean loss and its gradient from
// package glm (glm.Objective.FuncGrad, with no ridge), then the
// regularizer's value and minimum-norm subgradient. grad is scratch of
// length k*d; z and gz, the callers' scratch of length k, are not needed.
//
// FuncGrad's arithmetic is that of a loop over the rows: the losses summed
// one at a time in row order, each gz_k(x_i)/n times x_i added into the
// gradient in row order (K = 1: each product fused into its sum, the
// margins in gonum Ddot's order with fused products; K > 1: each product
// rounded, the margins summed in column order), and from glm's threshold
// of 16384 rows on, two fixed parts (at multiples of 4) summed
// concurrently and added in part order: the result depends on n alone,
// not on GOMAXPROCS or the scheduling.
func (p *problem) objective(w, grad, _, _ []float64) (f, gnorm float64) {
	if p.obj == nil {
		var err error
		p.obj, err = glm.New(mat.NewDense(p.n, p.d, p.x), p.y, glm.Config{Loss: p.loss, Classes: p.cfg.Classes})
		if err != nil {
			// The configuration was checked by New: a loss, K = p.k outputs.
			panic(err)
		}
	}
	f = p.obj.FuncGrad(grad, w)
	f += p.cfg.Reg.Value(w)
	gnorm = p.cfg.Reg.MinNormSubgrad(grad, grad, w)
	return f, gnorm
}
