package losses

import (
	"fmt"
	"math"
)

// Softmax is the multinomial logistic (softmax cross-entropy) loss over K >= 2
// classes, with one model W in R^{K x d} and margins z = W x in R^K:
//
//	l(z, y) = log(sum_k exp(z_k)) - z_y,   y in {0, ..., K-1},
//
// computed stably by subtracting max_k z_k. With p = softmax(z), its
// gradient is p - e_y and its Hessian diag(p) - p p^T.
//
// Constants (DESIGN.md), for every z and y:
//
//   - L_z = sqrt(2): ||p - e_y||^2 = (1-p_y)^2 + sum_{k != y} p_k^2
//     <= (1-p_y)^2 + (sum_{k != y} p_k)^2 = 2(1-p_y)^2 <= 2, approached when
//     p puts its mass on one wrong class.
//   - S_z = 1/2: v^T (diag(p) - p p^T) v = Var_p(v) >= 0, so the Hessian is
//     PSD (the loss is convex); by Gershgorin each eigenvalue is at most
//     max_k [p_k(1-p_k) + p_k sum_{j != k} p_j] = max_k 2 p_k(1-p_k) <= 1/2,
//     attained for K = 2 and p = (1/2, 1/2). Bohning (1992), "Multinomial
//     logistic regression algorithm", Ann. Inst. Statist. Math. 44(1),
//     gives the sharper matrix bound (1/2)(I - 11^T/K).
//
// In W (Frobenius norm), the gradient is (p - e_y) x^T and the Hessian
// (diag(p) - p p^T) kron x x^T, so L = sqrt(2) kappa and beta_s = kappa^2/2.
//
// The zero value is ready to use; the number of classes is passed to
// Outputs and CheckLabel.
type Softmax struct{}

// Name returns "softmax".
func (Softmax) Name() string { return "softmax" }

// Task returns Multiclass.
func (Softmax) Task() Task { return Multiclass }

// Outputs returns classes: one margin per class.
func (Softmax) Outputs(classes int) int { return classes }

// CheckLabel accepts the class indices 0, 1, ..., classes-1 (as float64),
// and returns an error wrapping ErrLabel for any other y, or for
// classes < 2.
func (Softmax) CheckLabel(y float64, classes int) error {
	if classes < 2 {
		return fmt.Errorf("%w: softmax needs at least 2 classes, have %d", ErrLabel, classes)
	}
	if err := checkFinite(y); err != nil {
		return err
	}
	if y != math.Trunc(y) || y < 0 || y >= float64(classes) {
		return fmt.Errorf("%w: %v, want a class index in {0, ..., %d}", ErrLabel, y, classes-1)
	}
	return nil
}

// classIndex returns y as an index into z. A label that CheckLabel rejects
// is a programmer error here.
func classIndex(y float64, k int) int {
	if !(y >= 0 && y < float64(k) && y == math.Trunc(y)) {
		panic(fmt.Sprintf("losses: softmax label %v is not a class index of %d classes; check labels with CheckLabel", y, k))
	}
	return int(y)
}

// maxOf returns the largest element of z. It panics if z is empty.
func maxOf(z []float64) float64 {
	if len(z) == 0 {
		panic("losses: softmax of an empty margin vector")
	}
	m := z[0]
	for _, v := range z[1:] {
		m = math.Max(m, v)
	}
	return m
}

// logSumExp returns max(z) and s = sum_k exp(z_k - max(z)), so that
// log(sum_k exp(z_k)) = max(z) + log(s) with 1 <= s <= K.
func logSumExp(z []float64) (zmax, s float64) {
	zmax = maxOf(z)
	for _, v := range z {
		s += math.Exp(v - zmax)
	}
	return zmax, s
}

// Value returns log(sum_k exp(z_k)) - z_y. It panics if y is not a class
// index of len(z) classes.
func (Softmax) Value(z []float64, y float64) float64 {
	c := classIndex(y, len(z))
	zmax, s := logSumExp(z)
	return math.Log(s) - (z[c] - zmax)
}

// Grad writes p - e_y into dst, p = softmax(z), and returns l(z, y). It
// panics if len(dst) != len(z) or y is not a class index.
func (Softmax) Grad(dst, z []float64, y float64) float64 {
	if len(dst) != len(z) {
		panic("losses: softmax gradient length mismatch")
	}
	c := classIndex(y, len(z))
	zmax := maxOf(z)
	var s float64
	for k, v := range z {
		dst[k] = math.Exp(v - zmax)
		s += dst[k]
	}
	for k := range dst {
		dst[k] /= s
	}
	dst[c] -= 1
	return math.Log(s) - (z[c] - zmax)
}

// Hess writes diag(p) - p p^T, row-major, into dst. It does not depend on y.
// It panics if len(dst) != len(z)^2.
func (Softmax) Hess(dst, z []float64, _ float64) {
	k := len(z)
	if len(dst) != k*k {
		panic("losses: softmax Hessian length mismatch")
	}
	zmax, s := logSumExp(z)
	// Keep p on the diagonal while the off-diagonal entries are filled.
	for i, v := range z {
		dst[i*k+i] = math.Exp(v-zmax) / s
	}
	for i := 0; i < k; i++ {
		pi := dst[i*k+i]
		for j := 0; j < k; j++ {
			if j != i {
				dst[i*k+j] = -pi * dst[j*k+j]
			}
		}
	}
	for i := 0; i < k; i++ {
		pi := dst[i*k+i]
		dst[i*k+i] = pi * (1 - pi)
	}
}

// Constants returns L_z = sqrt(2), S_z = 1/2, convex, smooth and C^2 (p is
// a smooth function of z), on any domain (see the type doc for the
// derivations). With dom.Classes = K >= 2 it also bounds the spectrum of
// the Hessian diag(p) - p p^T: its rows sum to 0, so Rank = K - 1, and its
// trace 1 - ||p||^2 is at most 1 - 1/K (||p||^2 >= 1/K by Cauchy-Schwarz),
// so RankSz = 1/K.
func (Softmax) Constants(dom Domain) (Constants, error) {
	c := Constants{Lz: math.Sqrt2, Sz: 0.5, Convex: true, Smooth: true, C2: true, LipHess: true, Tz: 1 / math.Sqrt2}
	if k := dom.Classes; k >= 2 {
		c.Rank, c.RankSz = k-1, 1/float64(k)
	}
	return c, nil
}
