package check

import (
	"math"
	"strconv"
)

// Finite reports whether x is neither NaN nor infinite.
func Finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Positive reports whether x is finite and > 0.
func Positive(x float64) bool { return x > 0 && !math.IsInf(x, 1) }

// NonNegative reports whether x is finite and >= 0.
func NonNegative(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }

// OpenUnit reports whether x lies in the open interval (0, 1). NaN does not.
func OpenUnit(x float64) bool { return x > 0 && x < 1 }

// HalfOpenUnit reports whether x lies in the half-open interval [0, 1), the
// range of a test fraction (0: no test rows) and of a privacy delta (0: pure
// DP). NaN does not.
func HalfOpenUnit(x float64) bool { return x >= 0 && x < 1 }

// FirstNonFinite returns the index of the first NaN or infinite entry of
// xs, or -1 when every entry is finite.
func FirstNonFinite(xs []float64) int {
	for i, x := range xs {
		if !Finite(x) {
			return i
		}
	}
	return -1
}

// ParseFinite parses s as a float64 and reports whether it is a number and
// finite ("NaN", "Inf" and out-of-range values are not).
func ParseFinite(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && Finite(v)
}
