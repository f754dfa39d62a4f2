// Package cliptest gives the tests of clipped gradients an exact norm.
package cliptest

import "math/big"

// Norm returns the L2 norm of the products a_k x_j, each rounded to
// float64 as a caller computes it, with their sum of squares exact
// (big.Float at 2200 bits, enough for any float64 square), rounded once.
// Norm(1, v) is the exact norm of v.
func Norm(a []float64, x []float64) float64 {
	s := new(big.Float).SetPrec(2200)
	for _, ak := range a {
		for _, xj := range x {
			b := new(big.Float).SetPrec(2200).SetFloat64(float64(ak * xj))
			s.Add(s, b.Mul(b, b))
		}
	}
	f, _ := s.Sqrt(s).Float64()
	return f
}

// One is the coefficients of a gradient taken as is: Norm(One, v).
var One = []float64{1}
