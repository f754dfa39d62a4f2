package preprocess

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
)

func TestStandardizer(t *testing.T) {
	// Column 0: mean 2, sd sqrt(2/3); column 1: constant 0.1 (rounding noise
	// must not become unit-size values); column 2: constant 0.
	x := mat.NewDense(3, 3, []float64{1, 0.1, 0, 2, 0.1, 0, 3, 0.1, 0})
	s, err := FitStandardizer(x)
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 3 || math.Abs(s.Mean[0]-2) > 1e-15 || math.Abs(s.Scale[0]-math.Sqrt(2.0/3)) > 1e-15 {
		t.Errorf("fitted %+v", s)
	}
	if s.Scale[1] != 1 || s.Scale[2] != 1 {
		t.Errorf("constant columns have scales %v, %v, want 1", s.Scale[1], s.Scale[2])
	}
	z, err := s.Apply(x)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		want := (float64(i+1) - 2) / math.Sqrt(2.0/3)
		if math.Abs(z.At(i, 0)-want) > 1e-12 || math.Abs(z.At(i, 1)) > 1e-15 || z.At(i, 2) != 0 {
			t.Errorf("row %d = %v", i, z.RawRowView(i))
		}
	}
	if x.At(0, 0) != 1 {
		t.Error("Apply modified its input")
	}
	if _, err := s.Apply(mat.NewDense(1, 2, nil)); !errors.Is(err, datasets.ErrInvalid) {
		t.Errorf("column mismatch: error %v", err)
	}
	for _, bad := range []mat.Matrix{nil, mat.NewDense(1, 1, []float64{math.NaN()}), mat.NewDense(1, 1, []float64{math.Inf(-1)})} {
		if _, err := FitStandardizer(bad); !errors.Is(err, datasets.ErrInvalid) {
			t.Errorf("FitStandardizer(%v): error %v", bad, err)
		}
	}
}

// TestStandardizerNoLeak checks that the statistics come from the training
// rows only: changing the test rows changes neither the statistics nor the
// transformed training rows, and the transformed test rows are not centred.
func TestStandardizerNoLeak(t *testing.T) {
	ds, err := datasets.Default()
	if err != nil {
		t.Fatal(err)
	}
	train, test, err := datasets.Split(ds, 0.2, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	fit := func(train, test *datasets.Dataset) (*Standardizer, *datasets.Dataset, *datasets.Dataset) {
		s, err := FitStandardizer(train.X)
		if err != nil {
			t.Fatal(err)
		}
		a, err := s.Transform(train)
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.Transform(test)
		if err != nil {
			t.Fatal(err)
		}
		return s, a, b
	}
	s1, tr1, te1 := fit(train, test)
	// Shift every test column by 100 training standard deviations.
	shifted := test.WithData(nil, nil)
	shifted.X, shifted.Y = mat.DenseCopyOf(test.X), test.Y
	m, d := shifted.X.Dims()
	for i := 0; i < m; i++ {
		for j := 0; j < d; j++ {
			shifted.X.Set(i, j, shifted.X.At(i, j)+100*s1.Scale[j])
		}
	}
	s2, tr2, te2 := fit(train, shifted)
	if !slices.Equal(s1.Mean, s2.Mean) || !slices.Equal(s1.Scale, s2.Scale) || !mat.Equal(tr1.X, tr2.X) {
		t.Error("the test rows changed the standardizer or the training rows")
	}
	if s1.N != 455 {
		t.Errorf("fitted on %d rows, want the 455 training rows", s1.N)
	}
	// Training columns are centred; the test columns move by exactly the
	// shift (statistics fitted on the test rows would cancel it).
	for j := 0; j < d; j++ {
		if mu := colMean(tr1.X, j); math.Abs(mu) > 1e-9 {
			t.Errorf("training column %d has mean %v", j, mu)
		}
		if diff := colMean(te2.X, j) - colMean(te1.X, j); math.Abs(diff-100) > 1e-9 {
			t.Errorf("test column %d moved by %v, want 100: statistics of the test rows leaked", j, diff)
		}
	}
	if !strings.Contains(strings.Join(tr1.Notes, "\n"), "fitted on the training split (455 rows)") {
		t.Errorf("no standardization note in %q", tr1.Notes)
	}
	if len(train.Notes) != len(tr1.Notes)-1 {
		t.Error("Transform changed the notes of its input")
	}
}

func colMean(x *mat.Dense, j int) float64 {
	n, _ := x.Dims()
	var s float64
	for i := 0; i < n; i++ {
		s += x.At(i, j)
	}
	return s / float64(n)
}

func TestAddBias(t *testing.T) {
	ds := toy(3, 1)
	b, err := AddBias(ds, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, d := b.X.Dims(); d != 2 || b.X.At(2, 1) != 2 || b.X.At(2, 0) != 2 || !slices.Equal(b.Features, []string{"id", "bias"}) {
		t.Errorf("AddBias = %v, %q", mat.Formatted(b.X), b.Features)
	}
	if _, d := ds.X.Dims(); d != 1 || len(ds.Features) != 1 {
		t.Error("AddBias modified its input")
	}
	if !strings.Contains(b.Notes[len(b.Notes)-1], "kappa") {
		t.Errorf("note %q", b.Notes)
	}
	if _, err := AddBias(b, 1); !errors.Is(err, datasets.ErrInvalid) {
		t.Errorf("second bias: error %v", err)
	}
	if _, err := AddBias(ds, math.NaN()); !errors.Is(err, datasets.ErrInvalid) {
		t.Errorf("NaN bias: error %v", err)
	}
}

func TestScaleRows(t *testing.T) {
	tests := []struct {
		name    string
		rows    []float64 // two columns
		kappa   float64
		clipped int
		want    []float64
	}{
		{"inside", []float64{0.3, 0.4, 0, 0}, 1, 0, []float64{0.3, 0.4, 0, 0}},
		{"on the sphere", []float64{0.6, 0.8}, 1, 0, []float64{0.6, 0.8}},
		{"outside", []float64{3, 4, 0.1, 0}, 2, 1, []float64{1.2, 1.6, 0.1, 0}},
		{"huge", []float64{1e200, 1e200}, 1, 1, []float64{math.Sqrt2 / 2, math.Sqrt2 / 2}},
	}
	for _, tt := range tests {
		x := mat.NewDense(len(tt.rows)/2, 2, slices.Clone(tt.rows))
		got, err := ScaleRows(x, tt.kappa)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.clipped {
			t.Errorf("%s: clipped %d rows, want %d", tt.name, got, tt.clipped)
		}
		for i, v := range x.RawMatrix().Data {
			if math.Abs(v-tt.want[i]) > 1e-12 {
				t.Errorf("%s: %v, want %v", tt.name, x.RawMatrix().Data, tt.want)
				break
			}
		}
	}
	for _, k := range []float64{0, -1, math.NaN(), math.Inf(1), 1e-300} {
		if _, err := ScaleRows(mat.NewDense(1, 1, []float64{1}), k); !errors.Is(err, datasets.ErrInvalid) {
			t.Errorf("kappa %v: error %v", k, err)
		}
	}
	if _, err := ScaleRows(mat.NewDense(1, 2, []float64{1, math.NaN()}), 1); !errors.Is(err, datasets.ErrInvalid) {
		t.Errorf("NaN row: error %v", err)
	}
}

// TestUnitBallWithBias checks ||x'|| <= 1 exactly in floating point on rows
// of every scale, and the map itself on rows inside the ball.
func TestUnitBallWithBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d = 2000, 7
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		scale := math.Pow(10, float64(rng.IntN(9)-4))
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.NormFloat64()*scale)
		}
	}
	x.SetRow(0, []float64{0.1, 0.2, 0, 0, 0, 0, 0}) // inside: mapped exactly
	ds := &datasets.Dataset{X: x, Y: make([]float64, n), Features: []string{"a", "b", "c", "d", "e", "f", "g"}}
	out, err := UnitBallWithBias(ds)
	if err != nil {
		t.Fatal(err)
	}
	if _, dd := out.X.Dims(); dd != d+1 || out.Features[d] != datasets.BiasFeature {
		t.Fatalf("got %d columns, names %q", dd, out.Features)
	}
	for i := 0; i < n; i++ {
		row := out.X.RawRowView(i)
		if sq := sumSq(row); sq > 1 {
			t.Fatalf("row %d has squared norm %v > 1", i, sq)
		}
		if math.Abs(row[d]-1/math.Sqrt2) > 1e-15 {
			t.Fatalf("row %d bias %v, want 1/sqrt2", i, row[d])
		}
	}
	want := []float64{0.1 / math.Sqrt2, 0.2 / math.Sqrt2}
	if r := out.X.RawRowView(0); math.Abs(r[0]-want[0]) > 1e-16 || math.Abs(r[1]-want[1]) > 1e-16 {
		t.Errorf("row inside the ball mapped to %v, want %v", r[:2], want)
	}
	if !strings.Contains(out.Notes[len(out.Notes)-1], "kappa = 1") {
		t.Errorf("notes %q", out.Notes)
	}
	if x.At(0, 0) != 0.1 {
		t.Error("UnitBallWithBias modified its input")
	}
	if _, err := UnitBallWithBias(out); !errors.Is(err, datasets.ErrInvalid) {
		t.Errorf("second bias: error %v", err)
	}
}

// TestEmptyDataset checks that every step rejects a data set without rows
// instead of panicking in gonum.
func TestEmptyDataset(t *testing.T) {
	empty := &datasets.Dataset{X: &mat.Dense{}}
	steps := map[string]func() error{
		"Split":            func() error { _, _, err := datasets.Split(empty, 0.5, 1, false); return err },
		"AddBias":          func() error { _, err := AddBias(empty, 1); return err },
		"UnitBallWithBias": func() error { _, err := UnitBallWithBias(empty); return err },
		"Transform":        func() error { _, err := (&Standardizer{}).Transform(empty); return err },
		"FitStandardizer":  func() error { _, err := FitStandardizer(&mat.Dense{}); return err },
	}
	for name, step := range steps {
		if err := step(); !errors.Is(err, datasets.ErrInvalid) {
			t.Errorf("%s: error %v, want datasets.ErrInvalid", name, err)
		}
	}
}

// TestPrepareUnitBall checks the composed preprocessing: rows end in the unit
// ball, the statistics come from train alone (moving the test rows changes
// nothing on the training side), the row scale acts before the clipping,
// a nil test set is allowed, and a bad scale is refused.
func TestPrepareUnitBall(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	mk := func(n int, shift float64) *datasets.Dataset {
		X := mat.NewDense(n, 4, nil)
		for i := 0; i < n; i++ {
			for j := 0; j < 4; j++ {
				X.Set(i, j, 10*r.NormFloat64()+shift)
			}
		}
		return &datasets.Dataset{X: X, Y: make([]float64, n), Features: []string{"a", "b", "c", "d"}}
	}
	train, test := mk(50, 0), mk(20, 0)
	moved := mat.DenseCopyOf(test.X)
	moved.Apply(func(_, _ int, v float64) float64 { return v + 100 }, moved)

	tr1, te1, std, err := PrepareUnitBall(train, test, UnitBallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr2, _, _, err := PrepareUnitBall(train, &datasets.Dataset{X: moved, Y: test.Y, Features: test.Features}, UnitBallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(tr1.X, tr2.X) {
		t.Error("the training rows depend on the test rows")
	}
	for _, ds := range []*datasets.Dataset{tr1, te1} {
		n, _ := ds.X.Dims()
		for i := 0; i < n; i++ {
			if nrm := mat.Norm(ds.X.RowView(i), 2); nrm > 1 {
				t.Fatalf("row %d has norm %v > 1", i, nrm)
			}
		}
	}
	if len(std.Mean) != 4 {
		t.Errorf("standardizer has %d means, want 4", len(std.Mean))
	}

	// A tiny row scale keeps rows inside the ball: the unit-ball map then
	// only appends the bias and divides by sqrt 2, so row i is
	// [scale*z_i, 1]/sqrt 2 with z_i the standardized row.
	const scale = 1e-3
	small, none, _, err := PrepareUnitBall(train, nil, UnitBallOptions{RowScale: scale})
	if err != nil || none != nil {
		t.Fatalf("nil test: got %v, %v", none, err)
	}
	z, err := std.Transform(train)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		for j := 0; j < 4; j++ {
			if got, want := small.X.At(i, j), scale*z.X.At(i, j)/math.Sqrt2; math.Abs(got-want) > 1e-15 {
				t.Fatalf("X[%d,%d] = %v, want %v", i, j, got, want)
			}
		}
	}

	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, _, _, err := PrepareUnitBall(train, test, UnitBallOptions{RowScale: bad}); !errors.Is(err, datasets.ErrInvalid) {
			t.Errorf("row scale %v: error %v, want datasets.ErrInvalid", bad, err)
		}
	}
}

// TestStandardizerHugeEntries checks that entries whose squares overflow
// give a finite scale: one cell of 1e200 used to make the column's scale 1
// and every standardized value of the others 0.
func TestStandardizerHugeEntries(t *testing.T) {
	X := mat.NewDense(4, 2, []float64{1e200, 1, -1e200, 2, 3e200, 3, 1e200, 4})
	s, err := FitStandardizer(X)
	if err != nil {
		t.Fatal(err)
	}
	// Column 0: mean 1e200, deviations 0, -2e200, 2e200, 0: sd = sqrt(2)*1e200.
	if want := math.Sqrt2 * 1e200; math.Abs(s.Scale[0]-want) > 1e-12*want || math.Abs(s.Mean[0]-1e200) > 1e-12*1e200 {
		t.Errorf("column 0: mean %v scale %v, want 1e200 and %v", s.Mean[0], s.Scale[0], want)
	}
	if want := math.Sqrt(1.25); math.Abs(s.Scale[1]-want) > 1e-12 || s.Mean[1] != 2.5 {
		t.Errorf("column 1: mean %v scale %v, want 2.5 and %v", s.Mean[1], s.Scale[1], want)
	}
	z, err := s.Apply(X)
	if err != nil {
		t.Fatal(err)
	}
	if v := z.At(2, 0); math.Abs(v-math.Sqrt2) > 1e-12 {
		t.Errorf("standardized X[2,0] = %v, want sqrt(2)", v)
	}
}

// toy returns n rows x_i = i with the first nPos labelled +1.
func toy(n, nPos int) *datasets.Dataset {
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range y {
		x.Set(i, 0, float64(i))
		y[i] = -1
		if i < nPos {
			y[i] = 1
		}
	}
	return &datasets.Dataset{X: x, Y: y, Features: []string{"id"}, Classes: []string{"neg", "pos"}}
}
