package datasets

import (
	"errors"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
)

// toy returns a classification data set whose feature is the row index, so
// that rows can be traced through a split: n rows, the first nPos labelled +1.
func toy(n, nPos int) *Dataset {
	x := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range y {
		x.Set(i, 0, float64(i))
		y[i] = -1
		if i < nPos {
			y[i] = 1
		}
	}
	return &Dataset{X: x, Y: y, Features: []string{"id"}, Classes: []string{"neg", "pos"}}
}

func ids(ds *Dataset) []int {
	n, _ := ds.X.Dims()
	out := make([]int, n)
	for i := range out {
		out[i] = int(ds.X.At(i, 0))
	}
	return out
}

func count(y []float64, v float64) int {
	c := 0
	for _, u := range y {
		if u == v {
			c++
		}
	}
	return c
}

func TestSplitStratified(t *testing.T) {
	tests := []struct {
		n, nPos  int
		frac     float64
		test     int // test rows
		testPos  int // +1 rows in the test set
		trainPos int
	}{
		{100, 30, 0.2, 20, 6, 24},
		{569, 212, 0.2, 114, 42, 170},
		{10, 1, 0.5, 5, 0, 1}, // remainders tie at 0.5: the first class (-1) gets the row
		{7, 3, 0.3, 2, 1, 2},
	}
	for _, tt := range tests {
		train, test, err := Split(toy(tt.n, tt.nPos), tt.frac, 3, true)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := test.X.Dims()
		if m != tt.test || count(test.Y, 1) != tt.testPos || count(train.Y, 1) != tt.trainPos {
			t.Errorf("n=%d pos=%d frac=%v: test %d rows with %d pos, train %d pos; want %d, %d, %d",
				tt.n, tt.nPos, tt.frac, m, count(test.Y, 1), count(train.Y, 1), tt.test, tt.testPos, tt.trainPos)
		}
		// A partition of the rows, each side in the original order, labels
		// travelling with their rows.
		all := append(ids(train), ids(test)...)
		slices.Sort(all)
		for i, v := range all {
			if v != i {
				t.Fatalf("rows %v are not a partition of 0..%d", all, tt.n-1)
			}
		}
		for _, side := range []*Dataset{train, test} {
			if !slices.IsSorted(ids(side)) {
				t.Errorf("rows out of order: %v", ids(side))
			}
			for i, id := range ids(side) {
				if want := toy(tt.n, tt.nPos).Y[id]; side.Y[i] != want {
					t.Errorf("row %d has label %v, want %v", id, side.Y[i], want)
				}
			}
		}
	}
}

func TestSplitDeterministic(t *testing.T) {
	ds := toy(200, 50)
	for _, strat := range []bool{false, true} {
		a, _, err := Split(ds, 0.25, 7, strat)
		if err != nil {
			t.Fatal(err)
		}
		b, _, _ := Split(ds, 0.25, 7, strat)
		c, _, _ := Split(ds, 0.25, 8, strat)
		if !slices.Equal(ids(a), ids(b)) {
			t.Errorf("stratified=%v: same seed, different splits", strat)
		}
		if slices.Equal(ids(a), ids(c)) {
			t.Errorf("stratified=%v: seeds 7 and 8 give the same split", strat)
		}
	}
	// The input is untouched and shares no memory with the output.
	train, _, _ := Split(ds, 0.25, 7, false)
	train.X.Set(0, 0, -5)
	train.Features[0] = "changed"
	if ds.X.At(0, 0) != 0 || ds.Features[0] != "id" {
		t.Error("Split output shares memory with its input")
	}
}

func TestSplitErrors(t *testing.T) {
	reg := toy(10, 0)
	reg.Classes = nil
	tests := []struct {
		name  string
		ds    *Dataset
		frac  float64
		strat bool
	}{
		{"zero fraction", toy(10, 5), 0, false},
		{"one", toy(10, 5), 1, false},
		{"negative", toy(10, 5), -0.2, false},
		{"NaN", toy(10, 5), math.NaN(), false},
		{"empty test", toy(3, 1), 0.1, false},
		{"empty train", toy(3, 1), 0.9, true},
		{"stratified regression", reg, 0.2, true},
		{"nil", nil, 0.2, false},
		{"labels mismatch", &Dataset{X: mat.NewDense(2, 1, nil), Y: []float64{1}}, 0.5, false},
	}
	for _, tt := range tests {
		if _, _, err := Split(tt.ds, tt.frac, 1, tt.strat); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", tt.name, err)
		}
	}
}

// TestSplitIndexIsSplitWithoutStrata checks that SplitIndex gives the
// positions of Split without stratification, that it never reads the rows
// (the same positions for any labels), and its testFrac = 0 case.
func TestSplitIndexIsSplitWithoutStrata(t *testing.T) {
	for _, n := range []int{2, 7, 100, 569} {
		ds := &Dataset{X: mat.NewDense(n, 1, nil), Y: make([]float64, n)}
		for i := range ds.Y {
			ds.X.Set(i, 0, float64(i))
			ds.Y[i] = float64(i % 3)
		}
		train, test, err := Split(ds, 0.3, 9, false)
		if err != nil {
			t.Fatal(err)
		}
		tr, te, err := SplitIndex(n, 0.3, 9)
		if err != nil {
			t.Fatal(err)
		}
		for r, i := range tr {
			if train.X.At(r, 0) != float64(i) {
				t.Fatalf("n %d: training row %d is position %v, SplitIndex says %d", n, r, train.X.At(r, 0), i)
			}
		}
		for r, i := range te {
			if test.X.At(r, 0) != float64(i) {
				t.Fatalf("n %d: test row %d is position %v, SplitIndex says %d", n, r, test.X.At(r, 0), i)
			}
		}
	}
	tr, te, err := SplitIndex(5, 0, 1)
	if err != nil || len(tr) != 5 || len(te) != 0 {
		t.Errorf("testFrac 0: %v %v %v", tr, te, err)
	}
	for _, bad := range []float64{-0.1, 1, math.NaN()} {
		if _, _, err := SplitIndex(10, bad, 1); !errors.Is(err, ErrInvalid) {
			t.Errorf("testFrac %v: err %v", bad, err)
		}
	}
	if _, _, err := SplitIndex(1, 0.5, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("one row split in half: err %v", err)
	}
}

// TestSplitInPlace: SplitInPlace gives the rows of Split, the training
// rows first, as Select of both sides does; with every row training it
// moves nothing and allocates nothing (no index of the rows), and its
// errors are Split's, the rows left as they were.
func TestSplitInPlace(t *testing.T) {
	s := Schema{Label: "y", Classes: []string{"p", "q"}}
	encode := func() *Encoded {
		enc, err := inPlaceTable(t, 60, 3).EncodeInPlace(s, losses.Binary, TextMark)
		if err != nil {
			t.Fatal(err)
		}
		return enc
	}
	for _, frac := range []float64{0, 0.25} {
		for _, stratified := range []bool{false, true} {
			want, got := encode(), encode()
			train, test, err := want.Split(frac, 7, stratified)
			if err != nil {
				t.Fatal(err)
			}
			want.Select(slices.Concat(train, test))
			nTrain, err := got.SplitInPlace(frac, 7, stratified)
			if err != nil || nTrain != len(train) {
				t.Fatalf("frac %v, stratified %v: %d training rows, error %v; want %d", frac, stratified, nTrain, err, len(train))
			}
			if d := sameEncoded(got, want); d != "" {
				t.Errorf("frac %v, stratified %v: %s", frac, stratified, d)
			}
		}
	}
	enc := encode()
	if a := testing.AllocsPerRun(10, func() { enc.SplitInPlace(0, 7, false) }); a != 0 {
		t.Errorf("SplitInPlace with every row training: %v allocations, want 0", a)
	}
	for _, frac := range []float64{-0.1, 1, 0.001} {
		enc, want := encode(), encode()
		if _, err := enc.SplitInPlace(frac, 7, false); !errors.Is(err, ErrInvalid) {
			t.Errorf("frac %v: error %v, want ErrInvalid", frac, err)
		}
		if d := sameEncoded(enc, want); d != "" {
			t.Errorf("frac %v: the rows changed on an error: %s", frac, d)
		}
	}
}
