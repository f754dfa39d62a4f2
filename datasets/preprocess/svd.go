package preprocess

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/internal/check"
)

// ErrSVD is returned (wrapped) for invalid truncated-SVD arguments or a
// factorization that fails. It wraps datasets.ErrInvalid.
var ErrSVD = fmt.Errorf("%w: truncated SVD", datasets.ErrInvalid)

// SVDProjection is a fitted truncated SVD: the top k right singular vectors
// V_k (d x k, orthonormal columns) and the singular values. Transform
// applies the same projection x -> V_k^T x to any data with d columns, so a
// projection fitted on a training split can be applied to its test split.
type SVDProjection struct {
	// V holds the right singular vectors, one per column, in decreasing order
	// of singular value. Each column's sign is fixed so that its entry of
	// largest magnitude is positive.
	V *mat.Dense
	// Values holds the k largest singular values, in decreasing order
	// (approximations when the randomized method was used).
	Values []float64

	method string // "exact" or "randomized", for ReduceSVD's Note
}

// Operator is a matrix that can multiply dense blocks faster than the
// generic mat.Mul through At (a sparse matrix, for instance).
// FitTruncatedSVD and SVDProjection.Transform use these products when their
// argument implements Operator; any other mat.Matrix goes through mat.Mul.
type Operator interface {
	Dims() (r, c int)
	// MulTo sets dst (r x l) to the product of the matrix and b (c x l).
	MulTo(dst, b *mat.Dense)
	// MulTransTo sets dst (c x l) to the product of the transpose and b (r x l).
	MulTransTo(dst, b *mat.Dense)
}

// matOperator adapts a gonum matrix to Operator.
type matOperator struct{ m mat.Matrix }

func (o matOperator) Dims() (int, int)             { return o.m.Dims() }
func (o matOperator) MulTo(dst, b *mat.Dense)      { dst.Mul(o.m, b) }
func (o matOperator) MulTransTo(dst, b *mat.Dense) { dst.Mul(o.m.T(), b) }

// asSVDOperator returns the fast operator of X when it has one.
func asSVDOperator(X mat.Matrix) Operator {
	if op, ok := X.(Operator); ok {
		return op
	}
	return matOperator{X}
}

// FitTruncatedSVD returns the top k right singular vectors of X (n x d) and
// the k largest singular values. No centering is done: this is the SVD of X
// itself (as scikit-learn's TruncatedSVD), not PCA.
//
// Two methods compute it; which one is used depends only on n, d, k and the
// arguments, and on the data only through the checks below, never on the
// number of threads:
//
//   - The exact method, when d <= n, d <= 512 and d < 4 (powerIters+1)
//     (k+oversample), that is when it costs no more than the randomized
//     method would: the Gram matrix G = X^T X (d x d) is accumulated in one
//     pass over X (blocks of rows, transposed in cache so that each feature
//     is contiguous, split into a fixed number of parts summed in a fixed
//     order, so that the bits do not depend on GOMAXPROCS), and its
//     symmetric eigen-decomposition (mat.EigenSym) gives V_k and the
//     singular values sqrt(lambda_i). Forming G squares the condition
//     number: the eigenvalues are computed with an absolute error of a few
//     eps lambda_1, so sigma_i has a relative error of about
//     eps (sigma_1/sigma_i)^2 and the vectors an error of about
//     eps lambda_1 over the eigenvalue gap. The method is kept only when
//     lambda_k > 1e-8 lambda_1 (sigma_k > 1e-4 sigma_1), where this error is
//     below 1e-7 relative; otherwise (a numerically rank-deficient top k)
//     the randomized method is run instead, whose orthonormal bases are
//     computed from X itself. It is also run when a finite X's Gram matrix
//     overflows, or is so small (largest diagonal entry below 2^-900) that
//     its rounding is no longer relative. The seed, oversample and powerIters do not change the
//     result of the exact method.
//   - Otherwise, the randomized range finder of Halko, Martinsson & Tropp
//     (2011, "Finding structure with randomness", Algorithms 4.4 and 5.1): a
//     Gaussian test matrix with k+oversample columns drawn from a PCG source
//     seeded with seed, powerIters subspace (power) iterations, each basis
//     re-orthonormalized by classical Gram-Schmidt twice (CGS2), then the
//     exact SVD of the small projected matrix. The bases are kept
//     transposed, so that each basis vector of length n is contiguous; a
//     dense X's products are Dgemv kernels on blocks of rows, in parallel,
//     with the same fixed parts as the Gram matrix. Accuracy improves with
//     oversample (5 to 10 is usual) and powerIters (1 to 4 for a slowly
//     decaying spectrum).
//
// The result depends only on X (its values and how it is given: a *mat.Dense
// and another view of the same values may differ in the last bits) and the
// arguments. Each column of V is signed
// so that its entry of largest magnitude is positive.
//
// Protocol note: the stability-privacy paper fits its SVD on all the data
// before splitting. That leaks nothing into a privacy guarantee only when the
// projection is treated as public or data-independent; to keep the test
// split out of every fitted statistic, fit on the training split and use
// Transform on the test split.
func FitTruncatedSVD(X mat.Matrix, k, oversample, powerIters int, seed uint64) (*SVDProjection, error) {
	if X == nil || isNilPointer(X) {
		return nil, fmt.Errorf("%w: nil matrix", ErrSVD)
	}
	op := asSVDOperator(X)
	n, d := op.Dims()
	switch {
	case k < 1 || k > min(n, d):
		return nil, fmt.Errorf("%w: k = %d not in [1, min(n, d) = %d]", ErrSVD, k, min(n, d))
	case oversample < 0:
		return nil, fmt.Errorf("%w: oversample = %d < 0", ErrSVD, oversample)
	case powerIters < 0:
		return nil, fmt.Errorf("%w: powerIters = %d < 0", ErrSVD, powerIters)
	}
	dense, isDense := X.(*mat.Dense)
	checked := false
	if useGram(n, d, k, oversample, powerIters) {
		var g []float64
		if isDense {
			g = gramDense(dense)
			// A NaN or infinite entry of X makes a diagonal entry of G
			// non-finite (as does an overflow of a finite X): only then
			// is X scanned.
			for i := range d {
				if math.IsNaN(g[i*d+i]) || math.IsInf(g[i*d+i], 0) {
					if !svdAllFinite(dense) {
						return nil, fmt.Errorf("%w: X has a NaN or infinite entry", ErrSVD)
					}
					g = nil
					break
				}
			}
			checked = true
		} else {
			g = gramOperator(op, min(k+oversample, n, d))
		}
		if g != nil {
			if p := fitGram(g, d, k); p != nil {
				return p, nil
			}
		}
	}
	if isDense && !checked && !svdAllFinite(dense) {
		return nil, fmt.Errorf("%w: X has a NaN or infinite entry", ErrSVD)
	}
	return fitRandomized(op, k, oversample, powerIters, seed)
}

// fitRandomized is the randomized method of FitTruncatedSVD; the arguments
// are valid.
func fitRandomized(op Operator, k, oversample, powerIters int, seed uint64) (*SVDProjection, error) {
	n, d := op.Dims()
	l := min(k+oversample, n, d)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	// The bases are kept transposed (yT = Y^T, l x n; zT = Z^T, l x d) so
	// that each basis vector is a contiguous row.
	omega := mat.NewDense(d, l, nil)
	raw := omega.RawMatrix().Data
	for i := range raw {
		raw[i] = rng.NormFloat64()
	}
	zT := mat.DenseCopyOf(omega.T())
	yT := mat.NewDense(l, n, nil)
	prod := svdProductsOf(op)
	prod.xzT(yT, zT)
	orthonormalizeRows(yT)
	for range powerIters {
		prod.xtyT(zT, yT)
		orthonormalizeRows(zT)
		prod.xzT(yT, zT)
		orthonormalizeRows(yT)
	}
	// B = Q^T X is l x d; factor its transpose X^T Q (d x l), whose left
	// singular vectors are the right singular vectors of B.
	prod.xtyT(zT, yT)
	var svd mat.SVD
	if !svd.Factorize(zT.T(), mat.SVDThin) {
		return nil, fmt.Errorf("%w: the SVD of the projected matrix did not converge", ErrSVD)
	}
	var u mat.Dense
	svd.UTo(&u)
	values := svd.Values(nil)
	v := mat.DenseCopyOf(u.Slice(0, d, 0, k))
	fixColumnSigns(v)
	return &SVDProjection{V: v, Values: values[:k], method: "randomized"}, nil
}

// TruncatedSVD fits a truncated SVD of X (see FitTruncatedSVD) and returns
// the projected data X V_k (n x k) with the fitted projection.
func TruncatedSVD(X mat.Matrix, k, oversample, powerIters int, seed uint64) (*mat.Dense, *SVDProjection, error) {
	p, err := FitTruncatedSVD(X, k, oversample, powerIters, seed)
	if err != nil {
		return nil, nil, err
	}
	z, err := p.Transform(X)
	if err != nil {
		return nil, nil, err
	}
	return z, p, nil
}

// ReduceSVD fits a truncated SVD with k components on train.X (see
// FitTruncatedSVD) and returns train and test (which may be nil) with their
// features replaced by the projections X V_k, named "svd1".."svdk", and a
// Note saying what was fitted on what. Fitting on the training split keeps
// the test split out of the projection; the stability-privacy paper's
// protocol instead reduces the whole data set before splitting, which is
// ReduceSVD(all, nil, ...). Either way the projection is a statistic of the
// data that is not privatized, and the Note says so. The inputs are not
// modified.
func ReduceSVD(train, test *datasets.Dataset, k, oversample, powerIters int, seed uint64) (trainOut, testOut *datasets.Dataset, err error) {
	if train == nil || train.X == nil || (test != nil && test.X == nil) {
		return nil, nil, fmt.Errorf("%w: nil data set", ErrSVD)
	}
	p, err := FitTruncatedSVD(train.X, k, oversample, powerIters, seed)
	if err != nil {
		return nil, nil, err
	}
	n, d := train.X.Dims()
	note := fmt.Sprintf("features projected on the top %d right singular vectors of the %d x %d matrix it was fitted on "+
		"(%s); the projection is not privatized and the privacy guarantee does not cover it", k, n, d, p.describe(seed))
	project := func(ds *datasets.Dataset) (*datasets.Dataset, error) {
		x, err := p.Transform(ds.X)
		if err != nil {
			return nil, err
		}
		out := *ds
		out.X = x
		out.Y = append([]float64(nil), ds.Y...)
		out.Features = p.FeatureNames("svd")
		out.Classes = append([]string(nil), ds.Classes...)
		if ds.Classes == nil {
			out.Classes = nil
		}
		out.Notes = append(append([]string(nil), ds.Notes...), note)
		return &out, nil
	}
	if trainOut, err = project(train); err != nil {
		return nil, nil, err
	}
	if test != nil {
		if testOut, err = project(test); err != nil {
			return nil, nil, err
		}
	}
	return trainOut, testOut, nil
}

// Components returns k, the number of output columns.
func (p *SVDProjection) Components() int {
	_, k := p.V.Dims()
	return k
}

// Transform returns X V_k (n x k). X must have as many columns as the data
// the projection was fitted on.
func (p *SVDProjection) Transform(X mat.Matrix) (*mat.Dense, error) {
	op := asSVDOperator(X)
	n, d := op.Dims()
	vd, k := p.V.Dims()
	if d != vd {
		return nil, fmt.Errorf("%w: X has %d columns, the projection was fitted on %d", ErrSVD, d, vd)
	}
	out := mat.NewDense(n, k, nil)
	op.MulTo(out, p.V)
	return out, nil
}

// FeatureNames returns names for the output columns: prefix followed by
// 1..k.
func (p *SVDProjection) FeatureNames(prefix string) []string {
	names := make([]string, p.Components())
	for j := range names {
		names[j] = fmt.Sprintf("%s%d", prefix, j+1)
	}
	return names
}

// orthonormalizeRows replaces the rows of t by an orthonormal basis of
// their span, by classical Gram-Schmidt applied twice to each row (CGS2,
// "twice is enough", Giraud, Langou, Rozloznik & van den Eshof 2005): the
// row's coefficients on the previous ones are computed at once (a Dgemv)
// and subtracted (a Dgemv on the transpose), twice, then it is normalized.
// A row whose norm falls below 1e-12 of its norm before a pass is
// numerically in the span of the previous ones and becomes zero.
func orthonormalizeRows(t *mat.Dense) {
	c, r := t.Dims()
	raw := t.RawMatrix()
	impl := blas64.Implementation()
	h := make([]float64, c)
	for j := range c {
		cj := raw.Data[j*raw.Stride : j*raw.Stride+r]
		before := svdNorm(cj)
		for pass := range 2 {
			if j > 0 {
				impl.Dgemv(blas.NoTrans, j, r, 1, raw.Data, raw.Stride, cj, 1, 0, h, 1)
				impl.Dgemv(blas.Trans, j, r, -1, raw.Data, raw.Stride, h, 1, 1, cj, 1)
			}
			nrm := svdNorm(cj)
			if nrm <= 1e-12*before || nrm == 0 {
				for m := range cj {
					cj[m] = 0
				}
				break
			}
			floats.Scale(1/nrm, cj)
			if pass == 0 {
				before = 1
			}
		}
	}
}

// fixColumnSigns flips columns so that each one's largest-magnitude entry
// is positive, making singular vectors unique up to ties.
func fixColumnSigns(v *mat.Dense) {
	r, c := v.Dims()
	for j := range c {
		best, at := 0.0, 0
		for i := range r {
			if a := math.Abs(v.At(i, j)); a > best {
				best, at = a, i
			}
		}
		if v.At(at, j) < 0 {
			for i := range r {
				v.Set(i, j, -v.At(i, j))
			}
		}
	}
}

// svdNorm returns the Euclidean norm of x: the square root of the sum of
// squares, or, when that overflows or underflows, the scaled computation of
// floats.Norm.
func svdNorm(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	if math.IsInf(s, 0) || s < 0x1p-969 {
		return floats.Norm(x, 2)
	}
	return math.Sqrt(s)
}

func svdAllFinite(m *mat.Dense) bool {
	r, _ := m.Dims()
	for i := range r {
		if check.FirstNonFinite(m.RawRowView(i)) >= 0 {
			return false
		}
	}
	return true
}

// isNilPointer reports whether m is a nil pointer in a non-nil interface.
func isNilPointer(m any) bool {
	v := reflect.ValueOf(m)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
