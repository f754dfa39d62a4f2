package report

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
)

// pickPrepare is the preparation of the rows as a chain of copies: the
// rows picked, standardized by FitStandardizer and Apply, then mapped by
// UnitBallRow or clipped by ScaleRows, the labels clipped. prepare must
// give its bits.
func pickPrepare(t *testing.T, sim Simulation, ds *datasets.Dataset, idx []int) (*mat.Dense, []float64) {
	t.Helper()
	x := mat.DenseCopyOf(rowsAt{ds.X, idx})
	y := make([]float64, len(idx))
	for r, i := range idx {
		y[r] = ds.Y[i]
		if sim.LabelBound > 0 {
			y[r] = math.Max(-sim.LabelBound, math.Min(sim.LabelBound, y[r]))
		}
	}
	return x, y
}

// TestPrepareMatchesCopies checks prepare, which writes each prepared row
// once from the data set, against the chain of copies it replaced, bit for
// bit, for every combination of standardization and bias, with labels
// clipped, and that it leaves the data set as it was.
func TestPrepareMatchesCopies(t *testing.T) {
	const n, d = 60, 4
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := range n {
		for j := range d {
			// Features of different scales, some rows beyond the unit ball.
			x.Set(i, j, math.Sin(float64(3*i+7*j))*float64(j+1)*3+float64(j))
		}
		y[i] = math.Cos(float64(i)) * 5
	}
	keep := mat.DenseCopyOf(x)
	ds := &datasets.Dataset{X: x, Y: y}
	trainIdx, testIdx, err := datasets.SplitIndex(n, 0.25, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ std, bias bool }{{true, true}, {true, false}, {false, true}, {false, false}} {
		sim := Simulation{Standardize: c.std, Bias: c.bias, Kappa: 2, LabelBound: 2}
		train, test, _, _, err := sim.prepare(ds, trainIdx, testIdx)
		if err != nil {
			t.Fatal(err)
		}
		trX, trY := pickPrepare(t, sim, ds, trainIdx)
		teX, teY := pickPrepare(t, sim, ds, testIdx)
		if c.std {
			std, err := preprocess.FitStandardizer(trX)
			if err != nil {
				t.Fatal(err)
			}
			if trX, err = std.Apply(trX); err != nil {
				t.Fatal(err)
			}
			if teX, err = std.Apply(teX); err != nil {
				t.Fatal(err)
			}
		}
		for _, m := range []**mat.Dense{&trX, &teX} {
			switch {
			case c.bias:
				r, _ := (*m).Dims()
				out := mat.NewDense(r, d+1, nil)
				for i := range r {
					if err := preprocess.UnitBallRow(out.RawRowView(i), (*m).RawRowView(i)); err != nil {
						t.Fatal(err)
					}
				}
				*m = out
			case c.std:
				if _, err := preprocess.ScaleRows(*m, 1); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, p := range []struct {
			name  string
			got   *datasets.Dataset
			wantX *mat.Dense
			wantY []float64
		}{{"train", train, trX, trY}, {"test", test, teX, teY}} {
			if !mat.Equal(p.got.X, p.wantX) {
				t.Errorf("standardize %v, bias %v: %s rows differ from the copies'", c.std, c.bias, p.name)
			}
			for i, v := range p.wantY {
				if p.got.Y[i] != v {
					t.Errorf("standardize %v, bias %v: %s label %d = %v, want %v", c.std, c.bias, p.name, i, p.got.Y[i], v)
				}
			}
		}
		if !mat.Equal(ds.X, keep) {
			t.Fatalf("standardize %v, bias %v: prepare changed the data set's rows", c.std, c.bias)
		}
	}
}
