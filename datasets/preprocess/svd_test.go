package preprocess

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
)

// randomOrthonormal returns an n x r matrix with orthonormal columns.
func randomOrthonormal(rng *rand.Rand, n, r int) *mat.Dense {
	g := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			g.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(g)
	var q mat.Dense
	qr.QTo(&q)
	return mat.DenseCopyOf(q.Slice(0, n, 0, r))
}

// spectrumMatrix returns U diag(values) V^T for random orthonormal U, V.
func spectrumMatrix(seed uint64, n, d int, values []float64) *mat.Dense {
	rng := rand.New(rand.NewPCG(seed, 1))
	r := len(values)
	u := randomOrthonormal(rng, n, r)
	v := randomOrthonormal(rng, d, r)
	var us mat.Dense
	us.Mul(u, mat.NewDiagDense(r, values))
	var x mat.Dense
	x.Mul(&us, v.T())
	return &x
}

func geometricValues(r int, top, ratio float64) []float64 {
	s := make([]float64, r)
	for i := range s {
		s[i] = top * math.Pow(ratio, float64(i))
	}
	return s
}

// exactTopK returns the k largest singular values and right singular vectors
// of x from gonum's dense SVD, signed as FitTruncatedSVD signs them.
func exactTopK(t *testing.T, x mat.Matrix, k int) ([]float64, *mat.Dense) {
	t.Helper()
	var exact mat.SVD
	if !exact.Factorize(x, mat.SVDThin) {
		t.Fatal("exact SVD failed")
	}
	var v mat.Dense
	exact.VTo(&v)
	d, _ := v.Dims()
	vk := mat.DenseCopyOf(v.Slice(0, d, 0, k))
	fixColumnSigns(vk)
	return exact.Values(nil)[:k], vk
}

// subspaceDistance returns max |(A A^T - B B^T)_ij|, zero when the columns
// of A and B (orthonormal) span the same subspace.
func subspaceDistance(a, b *mat.Dense) float64 {
	var pa, pb mat.Dense
	pa.Mul(a, a.T())
	pb.Mul(b, b.T())
	pa.Sub(&pa, &pb)
	return mat.Norm(&pa, math.Inf(1))
}

// orthonormalityError returns max |(V^T V - I)_ij|.
func orthonormalityError(v *mat.Dense) float64 {
	_, k := v.Dims()
	var vtv mat.Dense
	vtv.Mul(v.T(), v)
	vtv.Sub(&vtv, eye(k))
	return mat.Norm(&vtv, math.Inf(1))
}

// checkAgainstExact compares p with the exact top k of x: singular values to
// a relative tolerance tol, the subspace and (the spectrum being separated)
// each vector to sqrt(tol), and orthonormality.
func checkAgainstExact(t *testing.T, x mat.Matrix, p *SVDProjection, tol float64) {
	t.Helper()
	k := p.Components()
	want, vk := exactTopK(t, x, k)
	for i, v := range p.Values {
		if rel := math.Abs(v-want[i]) / want[i]; rel > tol {
			t.Errorf("singular value %d = %v, exact %v (relative error %.2g > %.2g)", i, v, want[i], rel, tol)
		}
	}
	if e := orthonormalityError(p.V); e > 1e-12 {
		t.Errorf("V^T V differs from I by %.2g", e)
	}
	if dist := subspaceDistance(p.V, vk); dist > math.Sqrt(tol) {
		t.Errorf("subspace differs from the exact one by %.2g", dist)
	}
	for j := range k {
		if diff := maxAbsDiff(p.V.ColView(j), vk.ColView(j)); diff > math.Sqrt(tol) {
			t.Errorf("singular vector %d differs from the exact one by %.2g", j, diff)
		}
	}
}

func TestTruncatedSVDMatchesExact(t *testing.T) {
	const n, d, k = 80, 50, 5
	tests := []struct {
		name                   string
		ratio                  float64
		oversample, powerIters int
		tol                    float64 // of the randomized method
	}{
		{name: "fast decay, no power iterations", ratio: 0.5, oversample: 10, powerIters: 0, tol: 1e-3},
		{name: "fast decay, 2 power iterations", ratio: 0.5, oversample: 10, powerIters: 2, tol: 1e-9},
		{name: "slow decay, 4 power iterations", ratio: 0.9, oversample: 10, powerIters: 4, tol: 1e-2},
	}
	for _, tc := range tests {
		x := spectrumMatrix(3, n, d, geometricValues(d, 10, tc.ratio))
		t.Run(tc.name+", randomized", func(t *testing.T) {
			p, err := fitRandomized(asSVDOperator(x), k, tc.oversample, tc.powerIters, 42)
			if err != nil {
				t.Fatal(err)
			}
			// The randomized vectors match only where the range is captured:
			// check the first one and the values.
			want, vk := exactTopK(t, x, k)
			for i, v := range p.Values {
				if rel := math.Abs(v-want[i]) / want[i]; rel > tc.tol {
					t.Errorf("singular value %d = %v, exact %v (relative error %.2g > %.2g)", i, v, want[i], rel, tc.tol)
				}
			}
			if diff := maxAbsDiff(p.V.ColView(0), vk.ColView(0)); diff > math.Sqrt(tc.tol) {
				t.Errorf("first singular vector differs from the exact one by %.2g", diff)
			}
			if e := orthonormalityError(p.V); e > 1e-12 {
				t.Errorf("V^T V differs from I by %.2g", e)
			}
		})
		t.Run(tc.name+", FitTruncatedSVD", func(t *testing.T) {
			z, p, err := TruncatedSVD(x, k, tc.oversample, tc.powerIters, 42)
			if err != nil {
				t.Fatal(err)
			}
			if p.method != "exact" {
				t.Fatalf("method %q, want exact for d = %d", p.method, d)
			}
			checkAgainstExact(t, x, p, 1e-12)
			// Projected data = X V_k, with column norms the singular values.
			if r, c := z.Dims(); r != n || c != k {
				t.Fatalf("projected dims %d x %d", r, c)
			}
			for j := range k {
				if norm := mat.Norm(z.ColView(j), 2); math.Abs(norm-p.Values[j]) > 1e-12*p.Values[0] {
					t.Errorf("||X v_%d|| = %v, singular value %v", j, norm, p.Values[j])
				}
			}
		})
	}
}

func maxAbsDiff(a, b mat.Vector) float64 {
	m := 0.0
	for i := range a.Len() {
		m = math.Max(m, math.Abs(a.AtVec(i)-b.AtVec(i)))
	}
	return m
}

// TestTruncatedSVDGramConditioning checks the exact method near its limit
// (sigma_k / sigma_1 just above 1e-4) against gonum's SVD, to the relative
// error its documentation states, and that below the limit the randomized
// method is used.
func TestTruncatedSVDGramConditioning(t *testing.T) {
	const n, d, k = 300, 40, 8
	tests := []struct {
		name   string
		last   float64 // sigma_k / sigma_1
		method string
	}{
		{name: "well conditioned", last: 0.1, method: "exact"},
		{name: "near the limit", last: 2e-4, method: "exact"},
		{name: "below the limit", last: 5e-5, method: "randomized"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Singular values from 1e3 down to last*1e3 at the k-th, then a
			// gap of 2 and a slow decay.
			values := make([]float64, d)
			for i := range values {
				if i < k {
					values[i] = 1e3 * math.Pow(tc.last, float64(i)/float64(k-1))
				} else {
					values[i] = values[k-1] / 2 * math.Pow(0.9, float64(i-k))
				}
			}
			x := spectrumMatrix(17, n, d, values)
			p, err := FitTruncatedSVD(x, k, 10, 5, 3)
			if err != nil {
				t.Fatal(err)
			}
			if p.method != tc.method {
				t.Fatalf("method %q, want %q", p.method, tc.method)
			}
			want, _ := exactTopK(t, x, k)
			for i, v := range p.Values {
				rel := math.Abs(v-want[i]) / want[i]
				// The documented accuracy of the exact method.
				tol := 1e-7
				if tc.method == "randomized" {
					tol = 1e-6
				}
				if rel > tol {
					t.Errorf("singular value %d = %v, exact %v (relative error %.2g > %.2g)", i, v, want[i], rel, tol)
				}
			}
			if e := orthonormalityError(p.V); e > 1e-12 {
				t.Errorf("V^T V differs from I by %.2g", e)
			}
			// The gap after sigma_k is a factor 2: the subspace is determined
			// to about eps lambda_1 / lambda_k.
			if _, vk := exactTopK(t, x, k); subspaceDistance(p.V, vk) > 1e-6 {
				t.Errorf("subspace differs from the exact one by %.2g", subspaceDistance(p.V, vk))
			}
		})
	}
}

// TestGramDense checks the blocked, parallel Gram matrix against gonum's
// product on a strided view with several parts and a partial last panel,
// and that its bits do not depend on GOMAXPROCS.
func TestGramDense(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	const n, d = 9*gramRows + 37, 13
	big := mat.NewDense(n+3, d+4, nil)
	for i := range n + 3 {
		for j := range d + 4 {
			big.Set(i, j, rng.NormFloat64())
		}
	}
	x := big.Slice(2, 2+n, 1, 1+d).(*mat.Dense)
	var want mat.Dense
	want.Mul(x.T(), x)
	procs := runtime.GOMAXPROCS(1)
	g1 := gramDense(x)
	runtime.GOMAXPROCS(4)
	g4 := gramDense(x)
	runtime.GOMAXPROCS(procs)
	for i := range d {
		for j := range d {
			got := g1[i*d+j]
			if j < i {
				if got != 0 {
					t.Fatalf("lower triangle (%d, %d) = %v", i, j, got)
				}
				continue
			}
			if math.Abs(got-want.At(i, j)) > 1e-12*n {
				t.Errorf("G(%d, %d) = %v, want %v", i, j, got, want.At(i, j))
			}
			if g4[i*d+j] != got {
				t.Errorf("G(%d, %d) = %v with 4 threads, %v with 1", i, j, g4[i*d+j], got)
			}
		}
	}
}

// TestDenseProducts checks the randomized method's dense kernels against
// gonum's products on a strided view with several parts and a partial last
// block, and that their bits do not depend on GOMAXPROCS.
func TestDenseProducts(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	const n, d, l = 9*gramRows + 37, 13, 5
	big := mat.NewDense(n+3, d+4, nil)
	for i := range n + 3 {
		for j := range d + 4 {
			big.Set(i, j, rng.NormFloat64())
		}
	}
	x := big.Slice(2, 2+n, 1, 1+d).(*mat.Dense)
	zT := mat.NewDense(l, d, nil)
	yT := mat.NewDense(l, n, nil)
	for _, m := range []*mat.Dense{zT, yT} {
		raw := m.RawMatrix().Data
		for i := range raw {
			raw[i] = rng.NormFloat64()
		}
	}
	prod := svdProductsOf(asSVDOperator(x))
	if _, ok := prod.(denseProducts); !ok {
		t.Fatalf("products %T, want denseProducts", prod)
	}
	var wantY, wantZ mat.Dense
	wantY.Mul(zT, x.T())
	wantZ.Mul(yT, x)
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	var got [2][2]*mat.Dense
	for i, p := range []int{1, 4} {
		runtime.GOMAXPROCS(p)
		got[i][0], got[i][1] = mat.NewDense(l, n, nil), mat.NewDense(l, d, nil)
		prod.xzT(got[i][0], zT)
		prod.xtyT(got[i][1], yT)
	}
	if !mat.EqualApprox(got[0][0], &wantY, 1e-12) {
		t.Error("(X Z)^T differs from gonum's product")
	}
	if !mat.EqualApprox(got[0][1], &wantZ, 1e-11) {
		t.Error("Y^T X differs from gonum's product")
	}
	if !mat.Equal(got[0][0], got[1][0]) || !mat.Equal(got[0][1], got[1][1]) {
		t.Error("the products differ between GOMAXPROCS 1 and 4")
	}
}

// denseOperator is a dense matrix seen only through Operator.
type denseOperator struct{ m *mat.Dense }

func (o denseOperator) Dims() (int, int)             { return o.m.Dims() }
func (o denseOperator) At(i, j int) float64          { return o.m.At(i, j) }
func (o denseOperator) T() mat.Matrix                { return mat.Transpose{Matrix: o} }
func (o denseOperator) MulTo(dst, b *mat.Dense)      { dst.Mul(o.m, b) }
func (o denseOperator) MulTransTo(dst, b *mat.Dense) { dst.Mul(o.m.T(), b) }

func TestTruncatedSVDOperator(t *testing.T) {
	x := spectrumMatrix(19, 200, 150, geometricValues(150, 5, 0.8))
	for _, tc := range []struct {
		name           string
		k, over, power int
		method         string
	}{
		{name: "exact", k: 4, over: 10, power: 2, method: "exact"},
		{name: "randomized", k: 4, over: 2, power: 1, method: "randomized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pd, err := FitTruncatedSVD(x, tc.k, tc.over, tc.power, 5)
			if err != nil {
				t.Fatal(err)
			}
			po, err := FitTruncatedSVD(denseOperator{x}, tc.k, tc.over, tc.power, 5)
			if err != nil {
				t.Fatal(err)
			}
			if pd.method != tc.method || po.method != tc.method {
				t.Fatalf("methods %q (dense), %q (operator), want %q", pd.method, po.method, tc.method)
			}
			if !mat.EqualApprox(pd.V, po.V, 1e-12) {
				t.Errorf("operator V differs from dense V")
			}
			if tc.method == "exact" {
				checkAgainstExact(t, x, pd, 1e-12)
			}
		})
	}
}

func TestTruncatedSVDDeterministic(t *testing.T) {
	x := spectrumMatrix(5, 40, 30, geometricValues(30, 1, 0.8))
	for _, tc := range []struct {
		name           string
		k, over, power int
		method         string
	}{
		{name: "exact", k: 4, over: 5, power: 1, method: "exact"},
		{name: "randomized", k: 2, over: 1, power: 0, method: "randomized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z1, p1, err := TruncatedSVD(x, tc.k, tc.over, tc.power, 7)
			if err != nil {
				t.Fatal(err)
			}
			if p1.method != tc.method {
				t.Fatalf("method %q, want %q", p1.method, tc.method)
			}
			z2, p2, err := TruncatedSVD(x, tc.k, tc.over, tc.power, 7)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(z1, z2) || !mat.Equal(p1.V, p2.V) {
				t.Error("same seed gave different results")
			}
			_, p3, err := TruncatedSVD(x, tc.k, tc.over, tc.power, 8)
			if err != nil {
				t.Fatal(err)
			}
			// The exact method does not use the seed; the randomized one does.
			if same := mat.Equal(p1.V, p3.V); same != (tc.method == "exact") {
				t.Errorf("another seed gave bit-identical vectors: %v", same)
			}
		})
	}
}

func TestTruncatedSVDRankDeficient(t *testing.T) {
	x := spectrumMatrix(9, 30, 20, []float64{5, 3, 1})
	_, p, err := TruncatedSVD(x, 6, 4, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	// lambda_6 = 0: the exact method's result is refused.
	if p.method != "randomized" {
		t.Errorf("method %q, want randomized", p.method)
	}
	for i, v := range p.Values {
		want := 0.0
		if i < 3 {
			want = []float64{5, 3, 1}[i]
		}
		if math.Abs(v-want) > 1e-9 {
			t.Errorf("value %d = %v, want %v", i, v, want)
		}
	}
	var vtv mat.Dense
	vtv.Mul(p.V.T(), p.V)
	if !mat.EqualApprox(&vtv, eye(6), 1e-9) {
		t.Errorf("V^T V = %v, want I", mat.Formatted(&vtv))
	}
}

func eye(n int) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := range n {
		m.Set(i, i, 1)
	}
	return m
}

func TestSVDProjectionTransform(t *testing.T) {
	x := spectrumMatrix(11, 50, 12, geometricValues(12, 4, 0.6))
	train := x.Slice(0, 40, 0, 12)
	test := x.Slice(40, 50, 0, 12)
	p, err := FitTruncatedSVD(train, 3, 5, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	zt, err := p.Transform(test)
	if err != nil {
		t.Fatal(err)
	}
	var want mat.Dense
	want.Mul(test, p.V)
	if !mat.EqualApprox(zt, &want, 1e-12) {
		t.Error("Transform differs from X V")
	}
	if _, err := p.Transform(mat.NewDense(2, 5, nil)); !errors.Is(err, ErrSVD) {
		t.Errorf("column mismatch: err = %v", err)
	}
	if names := p.FeatureNames("svd"); len(names) != 3 || names[2] != "svd3" {
		t.Errorf("FeatureNames = %v", names)
	}
}

func TestTruncatedSVDErrors(t *testing.T) {
	x := mat.NewDense(4, 3, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3})
	nan := mat.DenseCopyOf(x)
	nan.Set(1, 1, math.NaN())
	inf := mat.DenseCopyOf(x)
	inf.Set(3, 2, math.Inf(-1))
	// 10 x 8 with l = 1: the randomized method, which checks X first.
	wide := mat.NewDense(10, 8, nil)
	wide.Set(9, 7, math.NaN())
	tests := []struct {
		name           string
		x              mat.Matrix
		k, over, power int
	}{
		{name: "k zero", x: x, k: 0},
		{name: "k above min(n, d)", x: x, k: 4},
		{name: "negative oversample", x: x, k: 1, over: -1},
		{name: "negative power iterations", x: x, k: 1, power: -1},
		{name: "NaN entry", x: nan, k: 1},
		{name: "infinite entry", x: inf, k: 1},
		{name: "NaN entry, randomized", x: wide, k: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := TruncatedSVD(tc.x, tc.k, tc.over, tc.power, 0); !errors.Is(err, ErrSVD) {
				t.Fatalf("err = %v, want ErrSVD", err)
			}
		})
	}
}

// TestTruncatedSVDScale checks that the randomized method's result scales
// with X: a column of norm above 1e12 is not taken for a dependent one, and
// a product whose sum of squares overflows is normalized.
func TestTruncatedSVDScale(t *testing.T) {
	x := spectrumMatrix(29, 30, 10, geometricValues(10, 1, 0.5))
	p1, err := fitRandomized(asSVDOperator(x), 2, 3, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, scale := range []float64{1e20, 1e160} {
		y := mat.DenseCopyOf(x)
		y.Scale(scale, y)
		p2, err := fitRandomized(asSVDOperator(y), 2, 3, 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if rel := math.Abs(p2.Values[i]/scale-p1.Values[i]) / p1.Values[i]; rel > 1e-12 {
				t.Errorf("singular value %d = %v of %g X, %v of X", i, p2.Values[i], scale, p1.Values[i])
			}
		}
		if !mat.EqualApprox(p1.V, p2.V, 1e-12) {
			t.Errorf("the singular vectors of %g X differ from those of X", scale)
		}
	}
}

// TestTruncatedSVDOverflow checks that a finite X whose Gram matrix
// overflows is factored by the randomized method.
func TestTruncatedSVDOverflow(t *testing.T) {
	x := spectrumMatrix(23, 30, 10, geometricValues(10, 1, 0.5))
	x.Scale(1e160, x)
	p, err := FitTruncatedSVD(x, 2, 8, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.method != "randomized" {
		t.Fatalf("method %q, want randomized", p.method)
	}
	for i, want := range []float64{1e160, 0.5e160} {
		if rel := math.Abs(p.Values[i]-want) / want; rel > 1e-9 {
			t.Errorf("singular value %d = %v, want %v", i, p.Values[i], want)
		}
	}
}

func TestReduceSVD(t *testing.T) {
	x := spectrumMatrix(13, 30, 8, geometricValues(8, 3, 0.5))
	y := make([]float64, 30)
	for i := range y {
		y[i] = float64(i%2*2 - 1)
	}
	ds := &datasets.Dataset{X: x, Y: y, Features: make([]string, 8), Classes: []string{"a", "b"}, Notes: []string{"loaded"}}
	train := &datasets.Dataset{X: mat.DenseCopyOf(x.Slice(0, 20, 0, 8)), Y: y[:20], Classes: ds.Classes}
	test := &datasets.Dataset{X: mat.DenseCopyOf(x.Slice(20, 30, 0, 8)), Y: y[20:], Classes: ds.Classes}

	tr, te, err := ReduceSVD(train, test, 3, 4, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	p, err := FitTruncatedSVD(train.X, 3, 4, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	var want mat.Dense
	want.Mul(test.X, p.V)
	if !mat.Equal(te.X, &want) {
		t.Error("test split not projected with the projection fitted on train")
	}
	if c := tr.Features; len(c) != 3 || c[0] != "svd1" || len(te.Features) != 3 {
		t.Errorf("Features = %v", c)
	}
	if len(tr.Notes) != 1 || !strings.Contains(tr.Notes[0], "not privatized") {
		t.Errorf("Notes = %q", tr.Notes)
	}

	all, none, err := ReduceSVD(ds, nil, 2, 4, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	if none != nil || len(all.Notes) != 2 || len(ds.Notes) != 1 {
		t.Errorf("test %v, notes %q (input notes %q)", none, all.Notes, ds.Notes)
	}
	if _, c := ds.X.Dims(); c != 8 {
		t.Error("input modified")
	}
	if _, _, err := ReduceSVD(nil, nil, 1, 0, 0, 0); !errors.Is(err, ErrSVD) {
		t.Errorf("nil train: err = %v", err)
	}
	if _, _, err := ReduceSVD(train, &datasets.Dataset{X: mat.NewDense(2, 3, nil)}, 1, 0, 0, 0); !errors.Is(err, ErrSVD) {
		t.Errorf("test with other columns: err = %v", err)
	}
}

func ExampleFitTruncatedSVD() {
	// Rank 2: the third singular value is zero.
	x := mat.NewDense(4, 3, []float64{
		3, 0, 0,
		0, 2, 0,
		3, 0, 0,
		0, 2, 0,
	})
	p, err := FitTruncatedSVD(x, 2, 1, 2, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("singular values %.4f\n", p.Values)
	z, _ := p.Transform(mat.NewDense(1, 3, []float64{1, 1, 1}))
	fmt.Printf("projection of (1, 1, 1): %.4f\n", z.RawRowView(0))
	// Output:
	// singular values [4.2426 2.8284]
	// projection of (1, 1, 1): [1.0000 1.0000]
}

// TestTruncatedSVDTiny checks that an X small enough for X^T X to be
// subnormal (where the exact method's rounding is not relative) is
// factored as accurately as X itself, and that a nil matrix is an error.
func TestTruncatedSVDTiny(t *testing.T) {
	x := spectrumMatrix(300, 20, 10, geometricValues(10, 1, 0.7))
	ref, err := FitTruncatedSVD(x, 5, 10, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, scale := range []float64{1e-158, 1e-160, 1e-162} {
		y := mat.DenseCopyOf(x)
		y.Scale(scale, y)
		p, err := FitTruncatedSVD(y, 5, 10, 4, 1)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if rel := math.Abs(p.Values[i]/scale-ref.Values[i]) / ref.Values[i]; rel > 1e-7 {
				t.Errorf("scale %g: singular value %d = %v, want %v (relative error %.2g)", scale, i, p.Values[i]/scale, ref.Values[i], rel)
			}
		}
		var prod mat.Dense
		prod.Mul(ref.V.T(), p.V) // |cosines| of the angles between the subspaces
		for i := range 5 {
			if math.Abs(math.Abs(prod.At(i, i))-1) > 1e-6 {
				t.Errorf("scale %g: singular vector %d differs (|cos| %v)", scale, i, math.Abs(prod.At(i, i)))
			}
		}
	}
	var nilDense *mat.Dense
	if _, err := FitTruncatedSVD(nilDense, 1, 1, 1, 1); !errors.Is(err, ErrSVD) {
		t.Errorf("nil matrix: %v, want ErrSVD", err)
	}
}
