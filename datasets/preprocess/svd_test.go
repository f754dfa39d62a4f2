package preprocess

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
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

func TestTruncatedSVDMatchesExact(t *testing.T) {
	const n, d, k = 80, 50, 5
	tests := []struct {
		name                   string
		ratio                  float64
		oversample, powerIters int
		tol                    float64
	}{
		{name: "fast decay, no power iterations", ratio: 0.5, oversample: 10, powerIters: 0, tol: 1e-3},
		{name: "fast decay, 2 power iterations", ratio: 0.5, oversample: 10, powerIters: 2, tol: 1e-9},
		{name: "slow decay, 4 power iterations", ratio: 0.9, oversample: 10, powerIters: 4, tol: 1e-2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := spectrumMatrix(3, n, d, geometricValues(d, 10, tc.ratio))
			var exact mat.SVD
			if !exact.Factorize(x, mat.SVDThin) {
				t.Fatal("exact SVD failed")
			}
			want := exact.Values(nil)
			var vExact mat.Dense
			exact.VTo(&vExact)
			vk := mat.DenseCopyOf(vExact.Slice(0, d, 0, k))
			fixColumnSigns(vk)

			z, p, err := TruncatedSVD(x, k, tc.oversample, tc.powerIters, 42)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range p.Values {
				if rel := math.Abs(v-want[i]) / want[i]; rel > tc.tol {
					t.Errorf("singular value %d = %v, exact %v (relative error %.2g > %.2g)", i, v, want[i], rel, tc.tol)
				}
			}
			// The leading singular vectors are well separated (gap >= 10%):
			// they must match the exact ones.
			if diff := maxAbsDiff(p.V.ColView(0), vk.ColView(0)); diff > math.Sqrt(tc.tol) {
				t.Errorf("first singular vector differs from the exact one by %.2g", diff)
			}
			// Projected data = X V_k, with column norms close to the
			// singular values (exact only when the range is captured).
			if r, c := z.Dims(); r != n || c != k {
				t.Fatalf("projected dims %d x %d", r, c)
			}
			for j := range k {
				if norm := mat.Norm(z.ColView(j), 2); math.Abs(norm-p.Values[j]) > tc.tol*want[0] {
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

func TestTruncatedSVDDeterministic(t *testing.T) {
	x := spectrumMatrix(5, 40, 30, geometricValues(30, 1, 0.8))
	z1, p1, err := TruncatedSVD(x, 4, 5, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	z2, p2, err := TruncatedSVD(x, 4, 5, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(z1, z2) || !mat.Equal(p1.V, p2.V) {
		t.Error("same seed gave different results")
	}
	_, p3, err := TruncatedSVD(x, 4, 5, 1, 8)
	if err != nil {
		t.Fatal(err)
	}
	if mat.Equal(p1.V, p3.V) {
		t.Error("another seed gave bit-identical vectors: the seed is not used")
	}
}

// TestTruncatedSVDScale checks that the result scales with X: a column of
// norm above 1e12 is not taken for a dependent one, and a product whose sum
// of squares overflows is normalized.
func TestTruncatedSVDScale(t *testing.T) {
	x := spectrumMatrix(29, 30, 10, geometricValues(10, 1, 0.5))
	_, p1, err := TruncatedSVD(x, 2, 3, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, scale := range []float64{1e20, 1e160} {
		y := mat.DenseCopyOf(x)
		y.Scale(scale, y)
		_, p2, err := TruncatedSVD(y, 2, 3, 2, 1)
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

func TestTruncatedSVDRankDeficient(t *testing.T) {
	x := spectrumMatrix(9, 30, 20, []float64{5, 3, 1})
	_, p, err := TruncatedSVD(x, 6, 4, 2, 1)
	if err != nil {
		t.Fatal(err)
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
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := TruncatedSVD(tc.x, tc.k, tc.over, tc.power, 0); !errors.Is(err, ErrSVD) {
				t.Fatalf("err = %v, want ErrSVD", err)
			}
		})
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
