package pdp

import (
	"fmt"
	"math"
	"sort"
)

// Stats summarizes a distribution of values over the rows.
type Stats struct {
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
}

// Summarize returns the mean, median, 90th and 99th percentiles (linear
// interpolation between order statistics) and maximum of v. NaN values are
// an error.
func Summarize(v []float64) (Stats, error) {
	if len(v) == 0 {
		return Stats{}, fmt.Errorf("%w: no values", ErrInput)
	}
	s := append([]float64(nil), v...)
	var sum float64
	for _, x := range s {
		if math.IsNaN(x) {
			return Stats{}, fmt.Errorf("%w: NaN value", ErrInput)
		}
		sum += x
	}
	sort.Float64s(s)
	return Stats{Mean: sum / float64(len(s)), Median: quantile(s, 0.5), P90: quantile(s, 0.9), P99: quantile(s, 0.99), Max: s[len(s)-1]}, nil
}

// quantile returns the q-quantile of sorted s by linear interpolation
// (Hyndman & Fan type 7, the default of R and NumPy).
func quantile(s []float64, q float64) float64 {
	h := q * float64(len(s)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (h-lo)*(s[i+1]-s[i])
}

// Moments returns the first k raw moments E[eps^j], j = 1..k, of eps over
// the rows: Wang's moment pDP of a data set (Per-instance DP, Definition 7,
// with the uniform distribution over the pairs (Z without z_i, z_i)); the
// parameter vector of the definition is these moments and the common delta.
func Moments(eps []float64, k int) []float64 {
	m := make([]float64, k)
	if len(eps) == 0 {
		return m
	}
	for _, e := range eps {
		p := 1.0
		for j := 0; j < k; j++ {
			p *= e
			m[j] += p
		}
	}
	for j := range m {
		m[j] /= float64(len(eps))
	}
	return m
}
