package perturb

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// ksStatistic returns the one-sample Kolmogorov-Smirnov statistic
// sup_x |F_n(x) - F(x)| of the samples (sorted in place) against cdf.
func ksStatistic(x []float64, cdf func(float64) float64) float64 {
	sort.Float64s(x)
	n := float64(len(x))
	var d float64
	for i, v := range x {
		f := cdf(v)
		d = math.Max(d, math.Max(f-float64(i)/n, float64(i+1)/n-f))
	}
	return d
}

// ksCritical returns the critical value of the one-sample KS statistic at
// level alpha for n samples from a continuous distribution, from the
// Dvoretzky-Kiefer-Wolfowitz inequality with Massart's constant,
// P(D_n > c) <= 2 exp(-2 n c^2): the false-rejection probability of
// "reject if D_n > ksCritical(n, alpha)" is at most alpha for every n.
func ksCritical(n int, alpha float64) float64 {
	return math.Sqrt(math.Log(2/alpha) / (2 * float64(n)))
}

// clopperPearson returns the exact two-sided Clopper-Pearson interval for
// k successes in n trials, each side at level alpha/2.
func clopperPearson(k, n int, alpha float64) (lo, hi float64) {
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(alpha / 2)
	}
	hi = 1
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - alpha/2)
	}
	return lo, hi
}
