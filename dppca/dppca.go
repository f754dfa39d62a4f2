// Package dppca computes differentially private principal components of
// rows in the unit ball by Analyze Gauss: the Gaussian mechanism on the
// second-moment matrix Z^T Z, then an eigendecomposition of the noisy
// matrix (post-processing).
//
// Reference: C. Dwork, K. Talwar, A. Thakurta and L. Zhang, "Analyze
// Gauss: Optimal Bounds for Privacy-Preserving Principal Component
// Analysis", STOC 2014, Algorithm 1 (Analyze Gauss): release A^T A + E with
// E symmetric, its upper triangle i.i.d. Gaussian, for rows of L2 norm at
// most 1; the paper states its guarantee for the addition or removal of a
// row (L2 sensitivity 1) with the classical Gaussian calibration. This
// package uses replace-one neighbours, as the rest of the project does
// (docs/DESIGN.md, section 1), so the sensitivity is Sensitivity = sqrt(2)
// (proved at Sensitivity), and calibrates sigma with the analytic Gaussian
// mechanism (Balle & Wang 2018, Theorem 8; perturb.AnalyticGaussian), which
// holds for every eps > 0. The paper is not in the project's paper folder:
// the algorithm is cited from its published statement, and the privacy
// claim rests on the sensitivity bound below and the analytic Gaussian
// mechanism alone.
package dppca

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
)

// Sensitivity is the L2 sensitivity of UpperTriangle(Z) when one row of Z
// is replaced and every row has norm at most 1.
//
// Proof. Replacing row z by z' changes Z^T Z by D = z z^T - z' z'^T. The
// upper triangle (diagonal included) of a symmetric matrix has Euclidean
// norm at most its Frobenius norm, and ||D||_F^2 = ||z||^4 + ||z'||^4 -
// 2 <z, z'>^2 <= 2. The bound is attained by z = e_1, z' = e_2.
const Sensitivity = math.Sqrt2

// Step names the ledger entry of Components in a fit's certificate.
const Step = "private principal components: Analyze Gauss (Dwork, Talwar, Thakurta & Zhang 2014, Algorithm 1) on the rows clip_1(z) of norm at most 1, " +
	"the analytic Gaussian mechanism on the upper triangle of Z^T Z at L2 sensitivity sqrt(2) (replace-one), the top k eigenvectors of the noisy matrix"

// MaxColumns is the widest rows Components takes: the second moments
// cost O(n p^2) and the eigendecomposition O(p^3), and at p = 2,000 (3,000
// rows, 5 directions) Components ran 74 s on the project's reference
// machine (two shared cores; p = 1,000: 2.5 s for the eigendecomposition
// alone), so that a wider limit admits runs of hours (p = 8,000 would be
// 64 times longer). A computational limit on a public value, not a
// privacy one. Project wider rows first (preprocess.Projection; the train
// command's --project k).
const MaxColumns = 2000

// MaxEntries bounds the entries p (p+1)/2 of the upper triangle: those of
// MaxColumns columns.
const MaxEntries = MaxColumns * (MaxColumns + 1) / 2

// ErrInput marks bad input: a row of norm above 1, k outside [1, p], a
// value that is not finite, or too many columns.
var ErrInput = errors.New("dppca: invalid input")

// normSlack is the rounding allowed on a row norm of 1.
const normSlack = 1e-9

// UpperTriangle returns the entries C_ij, i <= j, of C = Z^T Z, row by row
// (p (p+1)/2 values for p columns).
func UpperTriangle(Z mat.Matrix) []float64 {
	var c mat.SymDense
	c.SymOuterK(1, mat.DenseCopyOf(Z).T())
	p := c.SymmetricDim()
	out := make([]float64, 0, p*(p+1)/2)
	for i := range p {
		for j := i; j < p; j++ {
			out = append(out, c.At(i, j))
		}
	}
	return out
}

// Result is a private principal subspace.
type Result struct {
	// V holds the top k eigenvectors of the noisy second-moment matrix,
	// orthonormal columns (p x k), in decreasing order of eigenvalue.
	V *mat.Dense
	// Calibration is the Gaussian noise's: sigma (Scale) for the
	// sensitivity Sensitivity at the budget, over the upper triangle's
	// entries (Dim).
	Calibration perturb.Calibration
}

// Components returns the top k principal directions of the rows of Z
// (n x p, every row of norm at most 1) privately: the eigenvectors of
// C + E, C = Z^T Z and E symmetric with its upper triangle i.i.d.
// N(0, sigma^2) drawn from src, sigma the analytic Gaussian's for
// (eps, delta) at L2 sensitivity Sensitivity. It is (eps, delta)-DP with
// respect to replacing one row of Z: the Gaussian mechanism on
// UpperTriangle(Z) (Balle & Wang 2018, Theorem 8) followed by
// post-processing (Dwork et al. 2014, Algorithm 1, with replace-one
// neighbours). Errors wrap ErrInput (checked before any noise is drawn) or
// the budget's error from perturb.
func Components(Z mat.Matrix, k int, eps, delta float64, src perturb.Source) (*Result, error) {
	n, p := Z.Dims()
	switch {
	case n < 1 || p < 1:
		return nil, fmt.Errorf("%w: an empty matrix (%d x %d)", ErrInput, n, p)
	case k < 1 || k > p:
		return nil, fmt.Errorf("%w: k = %d components of %d columns, want 1 <= k <= %d", ErrInput, k, p, p)
	case p > 0 && p*(p+1)/2 > MaxEntries:
		return nil, fmt.Errorf("%w: %d columns, more than %d (MaxColumns): project the rows first to at most %d dimensions (--project k)", ErrInput, p, MaxColumns, MaxColumns)
	}
	for i := range n {
		var s float64
		for j := range p {
			v := Z.At(i, j)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: row %d, column %d is %v", ErrInput, i, j, v)
			}
			s += v * v
		}
		if math.Sqrt(s) > 1+normSlack {
			return nil, fmt.Errorf("%w: row %d has norm %g > 1 (map the rows into the unit ball first)", ErrInput, i, math.Sqrt(s))
		}
	}
	ut := UpperTriangle(Z)
	cal, err := perturb.Calibrate(perturb.AnalyticGaussian, eps, delta, perturb.Sensitivity{L2: Sensitivity}, len(ut))
	if err != nil {
		return nil, err
	}
	if err := src.AddGaussian(ut, cal.Scale); err != nil {
		return nil, err
	}
	noisy := mat.NewSymDense(p, nil)
	idx := 0
	for i := range p {
		for j := i; j < p; j++ {
			noisy.SetSym(i, j, ut[idx])
			idx++
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(noisy, true) {
		return nil, errors.New("dppca: the eigendecomposition did not converge")
	}
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	// EigenSym orders the eigenvalues ascending: the last k columns, reversed.
	V := mat.NewDense(p, k, nil)
	for c := range k {
		for r := range p {
			V.Set(r, c, vecs.At(r, p-1-c))
		}
	}
	// Every zero is written +0 (post-processing): a verifier refuses a -0.
	dp.PositiveZeros(V.RawMatrix().Data)
	return &Result{V: V, Calibration: cal}, nil
}
