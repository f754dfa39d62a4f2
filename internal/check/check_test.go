package check

import (
	"math"
	"testing"
)

func TestPredicates(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		x                                            float64
		finite, positive, nonNeg, openUnit, halfOpen bool
	}{
		{0, true, false, true, false, true},
		{0.5, true, true, true, true, true},
		{1, true, true, true, false, false},
		{math.Nextafter(1, 0), true, true, true, true, true},
		{-1, true, false, false, false, false},
		{math.Copysign(0, -1), true, false, true, false, true},
		{math.MaxFloat64, true, true, true, false, false},
		{math.SmallestNonzeroFloat64, true, true, true, true, true},
		{nan, false, false, false, false, false},
		{inf, false, false, false, false, false},
		{-inf, false, false, false, false, false},
	}
	for _, tc := range tests {
		if got := Finite(tc.x); got != tc.finite {
			t.Errorf("Finite(%v) = %v", tc.x, got)
		}
		if got := Positive(tc.x); got != tc.positive {
			t.Errorf("Positive(%v) = %v", tc.x, got)
		}
		if got := NonNegative(tc.x); got != tc.nonNeg {
			t.Errorf("NonNegative(%v) = %v", tc.x, got)
		}
		if got := OpenUnit(tc.x); got != tc.openUnit {
			t.Errorf("OpenUnit(%v) = %v", tc.x, got)
		}
		if got := HalfOpenUnit(tc.x); got != tc.halfOpen {
			t.Errorf("HalfOpenUnit(%v) = %v", tc.x, got)
		}
	}
}

func TestFirstNonFinite(t *testing.T) {
	tests := []struct {
		xs   []float64
		want int
	}{
		{nil, -1},
		{[]float64{1, 2}, -1},
		{[]float64{1, math.NaN(), math.Inf(1)}, 1},
		{[]float64{math.Inf(-1)}, 0},
	}
	for _, tc := range tests {
		if got := FirstNonFinite(tc.xs); got != tc.want {
			t.Errorf("FirstNonFinite(%v) = %d, want %d", tc.xs, got, tc.want)
		}
	}
}

func TestParseFinite(t *testing.T) {
	for s, ok := range map[string]bool{"1.5": true, "-2e3": true, " 1": false, "NaN": false, "inf": false, "1e999": false, "x": false, "": false} {
		if _, got := ParseFinite(s); got != ok {
			t.Errorf("ParseFinite(%q) ok = %v, want %v", s, got, ok)
		}
	}
	if v, _ := ParseFinite("0.25"); v != 0.25 {
		t.Errorf("ParseFinite(0.25) = %v", v)
	}
}
