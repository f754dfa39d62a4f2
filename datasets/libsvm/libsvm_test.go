package libsvm

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestReadLibSVM(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		opts    Options
		x       []float64 // row-major
		rows    int
		y       []float64
		classes []string
	}{
		{
			name: "binary 0/1 with comment and blank line",
			in:   "1 1:0.5 3:2\n\n0 2:-1 # note\n",
			rows: 2, x: []float64{0.5, 0, 2, 0, -1, 0},
			y: []float64{1, -1}, classes: []string{"0", "1"},
		},
		{
			name: "binary -1/+1 written two ways",
			in:   "+1 1:1\n-1 1:2\n1.0 1:3\n",
			rows: 3, x: []float64{1, 2, 3},
			y: []float64{1, -1, 1}, classes: []string{"-1", "1"},
		},
		{
			name: "binary positive chosen",
			in:   "2 1:1\n7 1:2\n",
			opts: Options{Positive: "2"},
			rows: 2, x: []float64{1, 2},
			y: []float64{1, -1}, classes: []string{"7", "2"},
		},
		{
			name: "multiclass sorted numerically",
			in:   "10 1:1\n2 1:2\n3 1:3\n2 1:4\n",
			rows: 4, x: []float64{1, 2, 3, 4},
			y: []float64{2, 0, 1, 0}, classes: []string{"2", "3", "10"},
		},
		{
			name: "given dimension and empty row",
			in:   "1\n0 2:1\n",
			opts: Options{Dimension: 3},
			rows: 2, x: []float64{0, 0, 0, 0, 1, 0},
			y: []float64{1, -1}, classes: []string{"0", "1"},
		},
		{
			name: "regression",
			in:   "0.25 1:1\n-3 2:1\n",
			opts: Options{Regression: true},
			rows: 2, x: []float64{1, 0, 0, 1},
			y: []float64{0.25, -3},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := Read(strings.NewReader(tc.in), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			want := mat.NewDense(tc.rows, len(tc.x)/tc.rows, tc.x)
			if !mat.Equal(ds.X, want) {
				t.Errorf("X = %v, want %v", mat.Formatted(ds.X), mat.Formatted(want))
			}
			if !reflect.DeepEqual(ds.Y, tc.y) || !reflect.DeepEqual(ds.Classes, tc.classes) {
				t.Errorf("Y, Classes = %v, %q, want %v, %q", ds.Y, ds.Classes, tc.y, tc.classes)
			}
			if _, d := ds.X.Dims(); len(ds.Features) != d || ds.Features[0] != "x1" {
				t.Errorf("Features = %v", ds.Features)
			}
		})
	}
}

func TestReadLibSVMErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		opts Options
	}{
		{name: "empty", in: "\n# only a comment\n"},
		{name: "bad label", in: "x 1:1\n0 1:1\n"},
		{name: "NaN label", in: "NaN 1:1\n0 1:1\n"},
		{name: "no colon", in: "1 1\n0 1:1\n"},
		{name: "zero index", in: "1 0:1\n0 1:1\n"},
		{name: "decreasing index", in: "1 2:1 1:1\n0 1:1\n"},
		{name: "duplicate index", in: "1 2:1 2:1\n0 1:1\n"},
		{name: "bad value", in: "1 1:abc\n0 1:1\n"},
		{name: "infinite value", in: "1 1:Inf\n0 1:1\n"},
		{name: "index above dimension", in: "1 3:1\n0 1:1\n", opts: Options{Dimension: 2}},
		{name: "index above max", in: "1 99:1\n0 1:1\n", opts: Options{MaxDimension: 10}},
		{name: "one class", in: "1 1:1\n1 1:2\n"},
		{name: "no features", in: "1\n0\n"},
		{name: "positive absent", in: "1 1:1\n0 1:1\n", opts: Options{Positive: "5"}},
		{name: "positive not a number", in: "1 1:1\n0 1:1\n", opts: Options{Positive: "yes"}},
		{name: "positive with multiclass", in: "1 1:1\n0 1:1\n2 1:1\n", opts: Options{Positive: "1"}},
		{name: "positive with regression", in: "1 1:1\n", opts: Options{Regression: true, Positive: "1"}},
		{name: "negative dimension", in: "1 1:1\n", opts: Options{Dimension: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Read(strings.NewReader(tc.in), tc.opts); !errors.Is(err, ErrFormat) {
				t.Fatalf("err = %v, want ErrFormat", err)
			}
		})
	}
}

func ExampleRead() {
	in := "+1 1:0.5 3:2\n-1 2:1\n"
	ds, err := Read(strings.NewReader(in), Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(mat.Formatted(ds.X))
	fmt.Println(ds.Y, ds.Classes)
	// Output:
	// ⎡0.5    0    2⎤
	// ⎣  0    1    0⎦
	// [1 -1] [-1 1]
}
