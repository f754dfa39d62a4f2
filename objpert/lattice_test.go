package objpert

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
)

// latticeRows returns n rows of one coordinate in [-1, 1] with labels, and
// the neighbour with row 0 replaced (label flipped).
func latticeRows(n int) (X, X2 *mat.Dense, y, y2 []float64) {
	r := rand.New(rand.NewPCG(3, 4))
	X = mat.NewDense(n, 1, nil)
	y = make([]float64, n)
	for i := range n {
		x := 2*r.Float64() - 1
		X.Set(i, 0, x)
		y[i] = 1
		if x+0.5*r.NormFloat64() < 0 {
			y[i] = -1
		}
	}
	X2 = mat.DenseCopyOf(X)
	y2 = append([]float64(nil), y...)
	X.Set(0, 0, 0.9)
	X2.Set(0, 0, 0.9)
	y2[0] = -y[0]
	return X, X2, y, y2
}

// onLattice reports whether every coordinate of b/step is within 0.01 of an
// integer.
func onLattice(b []float64, step float64) bool {
	for _, v := range b {
		q := v / step
		if math.Abs(q-math.Round(q)) > 0.01 {
			return false
		}
	}
	return true
}

// binomialTwoSided returns the two-sided p-value of c successes in m draws
// of Bin(m, 1/2): 2 min(P(X <= c), P(X >= c)), at most 1.
func binomialTwoSided(c, m int) float64 {
	logPmf := func(k int) float64 {
		lg := func(x int) float64 { v, _ := math.Lgamma(float64(x + 1)); return v }
		return lg(m) - lg(k) - lg(m-k) - float64(m)*math.Ln2
	}
	lo, hi := 0.0, 0.0
	for k := 0; k <= m; k++ {
		if k <= c {
			lo += math.Exp(logPmf(k))
		}
		if k >= c {
			hi += math.Exp(logPmf(k))
		}
	}
	return math.Min(1, 2*math.Min(lo, hi))
}

// latticeAttack releases trials times on S and on S' (secure source) and
// returns how many releases on each give a b(w; S) whose every coordinate
// is within 0.01 of the lattice of b: the attack on the lattice-snapped
// noise by someone who knows S and S'.
func latticeAttack(t *testing.T, trials int, noOutput bool) (onS, onS2 int, cal Calibration) {
	t.Helper()
	const n = 20
	X, X2, y, y2 := latticeRows(n)
	XS, yS := X, y
	loss := losses.Logistic{}
	pr := problem(loss, X, 1, 0.05)
	cal, err := Calibrate(perturb.Objective, 1, 0, pr)
	if err != nil {
		t.Fatal(err)
	}
	cal.noOutputNoise = noOutput
	// The secure sampler's lattice: 2^(e-21) for theta in [2^(e-1), 2^e).
	_, e := math.Frexp(2 * cal.L / cal.EpsNoise)
	step := math.Ldexp(1, e-21)
	if step > cal.BStep {
		t.Fatalf("lattice step %v above the calibration's bound %v", step, cal.BStep)
	}
	src := perturb.Secure()
	run := func(X *mat.Dense, y []float64) int {
		c := 0
		for range trials {
			m, _, err := Release(context.Background(), X, y, pr, cal, src)
			if err != nil {
				t.Fatal(err)
			}
			// The attacker's test: is b(w; S) on the lattice? Its rate
			// is compared between releases on S and releases on S'.
			if onLattice(inverseNoise(t, XS, yS, loss, 1, pr.Lambda, m.W), step) {
				c++
			}
		}
		return c
	}
	return run(X, y), run(X2, y2), cal
}

// TestLatticeAttack turns the attack on the lattice of b into a test: with
// the output noise xi, the fractions of releases on S and on S' whose
// b(w; S) lies on the lattice are indistinguishable (an exact
// conditional binomial test: given the total count m, the count on S is
// Bin(m, 1/2) when the two rates are equal, and the test rejects at
// p-value < 1e-6, so a correct mechanism fails it with probability at most
// 1e-6). The negative control drops xi (the construction before the fix):
// the releases on S land on the lattice and those on S' do not, and the
// same test must reject.
func TestLatticeAttack(t *testing.T) {
	const trials = 4000
	onS, onS2, cal := latticeAttack(t, trials, false)
	m := onS + onS2
	pv := binomialTwoSided(onS, m)
	t.Logf("with xi (theta_2 = %.3g, r = %.3g): on the lattice %d of %d releases on S, %d of %d on S' (p-value %.3g; 0.02 expected by chance)",
		cal.Theta2, cal.Radius, onS, trials, onS2, trials, pv)
	if pv < 1e-6 {
		t.Errorf("the lattice tells S from S': %d vs %d of %d releases (p-value %.3g)", onS, onS2, trials, pv)
	}
	// The rate is that of a uniform position modulo the step (0.02), not
	// that of the snapped draw (about 1).
	if rate := float64(onS) / trials; rate > 0.05 {
		t.Errorf("%d of %d releases on S are on the lattice: xi does not blur it", onS, trials)
	}

	const control = 400
	cS, cS2, _ := latticeAttack(t, control, true)
	pc := binomialTwoSided(cS, cS+cS2)
	t.Logf("without xi: on the lattice %d of %d releases on S, %d of %d on S' (p-value %.3g)", cS, control, cS2, control, pc)
	if pc >= 1e-6 || cS < control*9/10 {
		t.Errorf("negative control: without xi the attack should distinguish: %d vs %d of %d (p-value %.3g)", cS, cS2, control, pc)
	}
}

// TestFloorSmallNEps checks LambdaFloor, RaiseToFloor and AutoLambda where
// L + B/n >= 4 (small n eps): the floor is computed from the constants
// (a probe at a huge lambda used to overflow the iteration budget into NaN
// and refuse), and the problem at the floor calibrates.
func TestFloorSmallNEps(t *testing.T) {
	cases := []struct {
		n, d int
		eps  float64
	}{{455, 31, 0.1}, {10, 1, 1}}
	for _, tc := range cases {
		for _, m := range []dp.Mechanism{perturb.Objective, perturb.AMP} {
			delta := 0.0
			if m == perturb.AMP {
				delta = 1e-5
			}
			pr := Problem{Loss: losses.Logistic{}, N: tc.n, D: tc.d, K: 1, Kappa: 1, Lambda: 1e-6}
			floor, err := LambdaFloor(m, tc.eps, delta, pr)
			if err != nil {
				t.Fatalf("%s n = %d, p = %d, eps = %v: %v", m, tc.n, tc.d, tc.eps, err)
			}
			share := PureOutputEpsShare
			if m == perturb.AMP {
				share = AMPOutputEpsShare
			}
			want := 0.25 / (float64(tc.n) * math.Expm1((1-share)*tc.eps/2))
			if math.Abs(floor-want) > 1e-12*want {
				t.Errorf("%s n = %d, eps = %v: floor %v, want %v", m, tc.n, tc.eps, floor, want)
			}
			raised, extra, err := RaiseToFloor(m, tc.eps, delta, pr)
			if err != nil || raised.Lambda != floor || extra <= 0 {
				t.Errorf("%s n = %d, eps = %v: raised to %v (+%v), %v", m, tc.n, tc.eps, raised.Lambda, extra, err)
			}
			if _, err := Calibrate(m, tc.eps, delta, raised); err != nil {
				t.Errorf("%s n = %d, eps = %v: at the floor: %v", m, tc.n, tc.eps, err)
			}
			lam, _, err := AutoLambda(m, tc.eps, delta, pr)
			if err != nil || !(lam >= 2*floor) || math.IsInf(lam, 0) {
				t.Errorf("%s n = %d, eps = %v: auto lambda %v, %v", m, tc.n, tc.eps, lam, err)
			}
		}
	}
}

// TestTinyEpsRefused checks the data-independent refusal of an eps so small
// that float64 cannot resolve the solver's gradient threshold at the noise
// term's scale (the solver, which runs until the threshold, could then run
// on), and that ordinary eps pass it.
func TestTinyEpsRefused(t *testing.T) {
	pr := Problem{Loss: losses.Logistic{}, N: 455, D: 31, K: 1, Kappa: 1}
	for _, eps := range []float64{1e-4, 1e-6} {
		raised, _, err := RaiseToFloor(perturb.Objective, eps, 0, pr)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Calibrate(perturb.Objective, eps, 0, raised)
		if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "too small for the solver") || !strings.Contains(err.Error(), "raise eps to at least") {
			t.Errorf("eps = %v: %v, want the precision refusal", eps, err)
		}
		// The eps the message names pass at the same lambda, and at the
		// floor of the other; a little less at the same lambda does not.
		c, err := constants(perturb.Objective, eps, 0, raised)
		if err != nil {
			t.Fatal(err)
		}
		atLambda, anyLambda, ok := c.solverEps()
		if !ok {
			t.Fatalf("eps = %v: no eps named", eps)
		}
		if _, err := Calibrate(perturb.Objective, atLambda, 0, raised); err != nil {
			t.Errorf("eps = %v: the named eps %v at lambda %v: %v", eps, atLambda, raised.Lambda, err)
		}
		if _, err := Calibrate(perturb.Objective, atLambda*(1-1e-6), 0, raised); !errors.Is(err, ErrBudget) {
			t.Errorf("eps = %v: just below the named eps %v at lambda %v: %v, want the refusal", eps, atLambda, raised.Lambda, err)
		}
		atFloor, _, err := RaiseToFloor(perturb.Objective, anyLambda, 0, pr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Calibrate(perturb.Objective, anyLambda, 0, atFloor); err != nil {
			t.Errorf("eps = %v: the eps %v named for any lambda, at its floor %v: %v", eps, anyLambda, atFloor.Lambda, err)
		}
	}
	for _, eps := range []float64{0.01, 1, 10} {
		raised, _, err := RaiseToFloor(perturb.Objective, eps, 0, pr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Calibrate(perturb.Objective, eps, 0, raised); err != nil {
			t.Errorf("eps = %v refused: %v", eps, err)
		}
	}
}
