package publish

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/perturb"
)

// rows returns n rows in the unit ball (kappa = 1, the last feature a
// bias 1/2) with -1/+1 labels from a planted logistic model.
func rows(n, d int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 11))
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	theta := make([]float64, d)
	for j := range theta {
		theta[j] = 2 * rng.NormFloat64()
	}
	for i := range n {
		row := x.RawRowView(i)
		for j := 0; j < d-1; j++ {
			row[j] = rng.NormFloat64() / math.Sqrt(float64(d))
		}
		if r := floats.Norm(row[:d-1], 2); r > math.Sqrt(0.75) {
			floats.Scale(math.Sqrt(0.75)/r, row[:d-1])
		}
		row[d-1] = 0.5
		y[i] = -1
		if rng.Float64() < 1/(1+math.Exp(-floats.Dot(theta, row))) {
			y[i] = 1
		}
	}
	return x, y
}

// logisticConstants are the public constants of a logistic release on n
// rows of norm at most 1 (L_z = 1, S_z = 1/4).
func logisticConstants(n, dim int, lambda float64) pdp.PublicConstants {
	return pdp.PublicConstants{N: n, Lambda: lambda, Lipschitz: 1, Smoothness: 0.25, Tolerance: pdp.DefaultTolerance,
		Noise: pdp.PrivacyLoss{Kind: perturb.AnalyticGaussian, Scale: 1, Delta: 1e-6}, Dim: dim}
}

// normalized returns the unsorted statistics min(1, g_i/L).
func normalized(a *pdp.Analysis, lip float64) []float64 {
	g := a.GradNorms()
	for i, v := range g {
		g[i] = math.Min(1, v/lip)
	}
	return g
}

// TestShiftBound trains on neighbouring data sets (one row replaced:
// label flips, rows of the largest norm along and against w_hat, a copy, a
// null row, in place of the most and the least exposed rows) and checks
// Shift's claim: every other row's statistic moves by at most rho; and
// that the per-row statistic bounds the exact remove-one sensitivity
// (Values' claim). It also checks that the lengths move by at most 1
// (Length, CountLength), and that the realized shift reaches a sizeable
// part of rho, so that the check is not vacuous.
func TestShiftBound(t *testing.T) {
	const n, d, lambda = 60, 4, 0.05
	x, y := rows(n, d, 3)
	cfg := pdp.Config{Loss: losses.Logistic{}, Lambda: lambda}
	a, err := pdp.New(x, y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	pc := logisticConstants(n, d, lambda)
	rho := Shift(&pc)
	b := pc.RemoveOneBound()
	u := normalized(a, pc.Lipschitz)
	for i := range n {
		diff, err := a.RemoveExact(i)
		if err != nil {
			t.Fatal(err)
		}
		if diff.L2 > b*u[i]*(1+1e-9)+1e-12 {
			t.Errorf("row %d: exact remove-one sensitivity %.6g above its bound %.6g", i, diff.L2, b*u[i])
		}
	}
	most, least := 0, 0
	for i, v := range u {
		if v > u[most] {
			most = i
		}
		if v < u[least] {
			least = i
		}
	}
	w := a.Solution().W
	dir := make([]float64, d)
	floats.ScaleTo(dir, 1/floats.Norm(w, 2), w)
	neg := make([]float64, d)
	floats.ScaleTo(neg, -1, dir)
	type repl struct {
		name string
		x    []float64
		y    float64
	}
	var worst float64
	for _, k := range []int{most, least, 7} {
		reps := []repl{
			{"label flip", x.RawRowView(k), -y[k]},
			{"along w, label -1", dir, -1},
			{"against w, label +1", neg, 1},
			{"copy of the most exposed", x.RawRowView(most), y[most]},
			{"null row", make([]float64, d), 1},
		}
		for _, r := range reps {
			x2 := mat.DenseCopyOf(x)
			y2 := append([]float64(nil), y...)
			x2.SetRow(k, r.x)
			y2[k] = r.y
			a2, err := pdp.New(x2, y2, cfg)
			if err != nil {
				t.Fatal(err)
			}
			u2 := normalized(a2, pc.Lipschitz)
			for j := range n {
				if j == k {
					continue
				}
				s := math.Abs(u[j] - u2[j])
				worst = math.Max(worst, s/rho)
				if s > rho {
					t.Errorf("replacing row %d (%s): row %d's statistic moved by %.6g > rho = %.6g", k, r.name, j, s, rho)
				}
			}
			checkLengths(t, sorted(u), sorted(u2), rho)
		}
	}
	t.Logf("largest realized shift: %.3g of rho = %.4g", worst, rho)
	if worst < 0.05 {
		t.Errorf("the adversarial neighbours moved the statistics by at most %.3g of rho: the check is vacuous", worst)
	}
}

func sorted(u []float64) []float64 {
	s := append([]float64(nil), u...)
	floats.Argsort(s, make([]int, len(s)))
	return s
}

// checkLengths checks that Length and CountLength differ by at most 1
// between the neighbours u and v, on a grid of values and thresholds.
func checkLengths(t *testing.T, u, v []float64, rho float64) {
	t.Helper()
	n := len(u)
	for _, r := range []int{1, n / 2, n - n/10, n} {
		for g := 0; g <= 200; g++ {
			tv := float64(g) / 200
			if l1, l2 := Length(u, r, tv, rho), Length(v, r, tv, rho); l1-l2 > 1 || l2-l1 > 1 {
				t.Fatalf("Length(rank %d, t %g): %d and %d on neighbours", r, tv, l1, l2)
			}
		}
	}
	for _, tau := range []float64{-0.1, 0, 0.05, 0.2, 0.5, 1} {
		for c := 0; c <= n; c++ {
			if l1, l2 := CountLength(u, c, tau, rho), CountLength(v, c, tau, rho); l1-l2 > 1 || l2-l1 > 1 {
				t.Fatalf("CountLength(c %d, tau %g): %d and %d on neighbours", c, tau, l1, l2)
			}
		}
	}
}

// TestLengthSensitivity draws random neighbours in the abstract
// neighbourhood of Shift (every value moved by at most rho, one replaced
// arbitrarily, values clipped to [0, 1]), including moves of exactly rho,
// and checks that the lengths move by at most 1; and that a length is 0
// exactly at the statistic itself.
func TestLengthSensitivity(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for trial := range 300 {
		n := 1 + rng.IntN(40)
		rho := []float64{0.01, 0.1, 0.3}[trial%3]
		u := make([]float64, n)
		for i := range u {
			u[i] = rng.Float64() * rng.Float64()
			if rng.IntN(5) == 0 {
				u[i] = float64(rng.IntN(5)) / 4 // ties on a lattice of rho
			}
		}
		v := make([]float64, n)
		for i := range v {
			step := (2*rng.Float64() - 1) * rho
			if rng.IntN(2) == 0 {
				step = math.Copysign(rho/(1+1e-9), step)
			}
			v[i] = math.Max(0, math.Min(1, u[i]+step))
		}
		v[rng.IntN(n)] = rng.Float64()
		su, sv := sorted(u), sorted(v)
		checkLengths(t, su, sv, rho)
		r := 1 + rng.IntN(n)
		if l := Length(su, r, su[r-1], rho); l != 0 {
			t.Fatalf("Length at the order statistic itself: %d", l)
		}
		if l := CountLength(su, upperBound(su, 0.3), 0.3, rho); l != 0 {
			t.Fatalf("CountLength at the count itself: %d", l)
		}
	}
}
