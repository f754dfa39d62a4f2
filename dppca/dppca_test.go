package dppca

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/perturb"
)

// unitRows returns n rows of p entries in the unit ball, most of their
// mass along the first column.
func unitRows(n, p int, seed uint64) *mat.Dense {
	r := rand.New(rand.NewPCG(seed, 1))
	Z := mat.NewDense(n, p, nil)
	for i := range n {
		row := Z.RawRowView(i)
		for j := range row {
			row[j] = 0.1 * r.NormFloat64()
		}
		row[0] += 2 * r.NormFloat64()
		nrm := floats.Norm(row, 2)
		floats.Scale(r.Float64()/math.Max(nrm, 1e-12), row)
	}
	return Z
}

// TestSensitivityNeighbours replaces each row of a data set by adversarial
// rows (unit vectors on a coordinate, the negated row, zero, a random unit
// vector) and checks that the upper triangle of Z^T Z moves by at most
// Sensitivity, and that e_1 replaced by e_2 moves it by exactly sqrt(2)
// (the bound is tight, so the calibration is not loose).
func TestSensitivityNeighbours(t *testing.T) {
	const n, p = 12, 5
	Z := unitRows(n, p, 3)
	base := UpperTriangle(Z)
	r := rand.New(rand.NewPCG(9, 9))
	worst := 0.0
	for i := range n {
		var repl [][]float64
		for j := range p {
			e := make([]float64, p)
			e[j] = 1
			repl = append(repl, e)
		}
		neg := mat.Row(nil, i, Z)
		floats.Scale(-1, neg)
		u := make([]float64, p)
		for j := range u {
			u[j] = r.NormFloat64()
		}
		floats.Scale(1/floats.Norm(u, 2), u)
		repl = append(repl, neg, make([]float64, p), u)
		for _, row := range repl {
			nb := mat.DenseCopyOf(Z)
			nb.SetRow(i, row)
			d := floats.Distance(base, UpperTriangle(nb), 2)
			if d > Sensitivity+1e-12 {
				t.Errorf("row %d replaced by %v: distance %v > %v", i, row, d, Sensitivity)
			}
			worst = max(worst, d)
		}
	}
	if worst == 0 {
		t.Error("no replacement moved the second moments")
	}
	e := mat.NewDense(2, 2, []float64{1, 0, 0, 0})
	f := mat.NewDense(2, 2, []float64{0, 1, 0, 0})
	if d := floats.Distance(UpperTriangle(e), UpperTriangle(f), 2); math.Abs(d-Sensitivity) > 1e-15 {
		t.Errorf("e_1 against e_2: distance %v, want sqrt(2)", d)
	}
}

// TestComponents checks that with a large eps the private direction is the
// data's principal one (first column), that a seeded run repeats, and that
// sigma is the analytic Gaussian's at sensitivity sqrt(2).
func TestComponents(t *testing.T) {
	Z := unitRows(400, 6, 5)
	res, err := Components(Z, 2, 1e4, 1e-5, perturb.Seeded(1))
	if err != nil {
		t.Fatal(err)
	}
	if r, c := res.V.Dims(); r != 6 || c != 2 {
		t.Fatalf("V is %d x %d", r, c)
	}
	if v := math.Abs(res.V.At(0, 0)); v < 0.99 {
		t.Errorf("|first direction's first entry| = %v, want the first column (>= 0.99)", v)
	}
	var g mat.Dense
	g.Mul(res.V.T(), res.V)
	if !mat.EqualApprox(&g, mat.NewDiagDense(2, []float64{1, 1}), 1e-9) {
		t.Errorf("V^T V = %v, want the identity", mat.Formatted(&g))
	}
	want, err := perturb.AnalyticGaussianSigma(1e4, 1e-5, math.Sqrt2)
	if err != nil || res.Calibration.Scale != want || res.Calibration.Dim != 21 {
		t.Errorf("calibration %+v, want sigma %v over 21 entries (%v)", res.Calibration, want, err)
	}
	again, err := Components(Z, 2, 1e4, 1e-5, perturb.Seeded(1))
	if err != nil || !mat.Equal(res.V, again.V) {
		t.Errorf("a seeded run differs: %v", err)
	}
}

// TestComponentsRefused checks the bad input refused before any noise.
func TestComponentsRefused(t *testing.T) {
	Z := unitRows(10, 3, 1)
	big := mat.DenseCopyOf(Z)
	big.Set(0, 0, 2)
	nan := mat.DenseCopyOf(Z)
	nan.Set(1, 1, math.NaN())
	for name, tt := range map[string]struct {
		Z          mat.Matrix
		k          int
		eps, delta float64
		input      bool
	}{
		"row norm above 1": {big, 1, 1, 1e-5, true},
		"NaN":              {nan, 1, 1, 1e-5, true},
		"k zero":           {Z, 0, 1, 1e-5, true},
		"k above p":        {Z, 4, 1, 1e-5, true},
		"eps zero":         {Z, 1, 0, 1e-5, false},
		"delta zero":       {Z, 1, 1, 0, false},
		"delta one":        {Z, 1, 1, 1, false},
	} {
		_, err := Components(tt.Z, tt.k, tt.eps, tt.delta, perturb.Seeded(1))
		if err == nil || tt.input != errors.Is(err, ErrInput) {
			t.Errorf("%s: %v (want ErrInput: %v)", name, err, tt.input)
		}
	}
}

// TestComponentsTooWide: rows wider than MaxColumns are refused before any
// work (the time grows as the cube of the width), with what to do.
func TestComponentsTooWide(t *testing.T) {
	Z := mat.NewDense(1, MaxColumns+1, nil)
	_, err := Components(Z, 1, 1, 1e-5, perturb.Seeded(1))
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "--project k") {
		t.Errorf("%d columns: %v", MaxColumns+1, err)
	}
	if MaxEntries != MaxColumns*(MaxColumns+1)/2 || MaxColumns > 2000 {
		t.Errorf("MaxEntries %d, MaxColumns %d", MaxEntries, MaxColumns)
	}
}
