package pdp

import (
	"errors"
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	cases := []struct {
		in   []float64
		want Stats
	}{
		{[]float64{3}, Stats{3, 3, 3, 3, 3}},
		{[]float64{1, 2, 3, 4}, Stats{2.5, 2.5, 3.7, 3.97, 4}},
		{[]float64{5, 1, 3}, Stats{3, 3, 4.6, 4.96, 5}},
	}
	for _, tc := range cases {
		got, err := Summarize(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range [][2]float64{{got.Mean, tc.want.Mean}, {got.Median, tc.want.Median}, {got.P90, tc.want.P90}, {got.P99, tc.want.P99}, {got.Max, tc.want.Max}} {
			if math.Abs(p[0]-p[1]) > 1e-12 {
				t.Errorf("Summarize(%v) = %+v, want %+v", tc.in, got, tc.want)
				break
			}
		}
	}
	if _, err := Summarize(nil); !errors.Is(err, ErrInput) {
		t.Error("empty input accepted")
	}
	if _, err := Summarize([]float64{1, math.NaN()}); !errors.Is(err, ErrInput) {
		t.Error("NaN accepted")
	}
	m := Moments([]float64{1, 2}, 3)
	if m[0] != 1.5 || m[1] != 2.5 || m[2] != 4.5 {
		t.Errorf("Moments = %v", m)
	}
}
