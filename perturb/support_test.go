package perturb

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLatticeOfSecureSamplers releases 200 coordinates with the secure
// source for every mechanism and checks that Lattice is the sampler's
// lattice: every coordinate is a multiple of the step, and (where the step
// is above the resolution of float64 at the released values: Laplace and
// gamma) not every one a multiple of twice the step (a step too small would
// pass the first check trivially; the second fails with probability about
// 2^-200 for a correct step).
func TestLatticeOfSecureSamplers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, mech := range Mechanisms() {
		n, _ := Lookup(mech)
		eps, delta := 1.0, 0.0
		if !n.Pure() {
			eps, delta = 0.7, 1e-5
		}
		cal, err := n.Calibrate(eps, delta, Sensitivity{L2: 0.37}, 200)
		if err != nil {
			t.Fatal(err)
		}
		w := make([]float64, cal.Dim)
		for i := range w {
			w[i] = rng.NormFloat64() // trained weights on no lattice
		}
		if err := n.Add(w, cal, Secure()); err != nil {
			t.Fatal(err)
		}
		step := Lattice(cal)
		if !(step > 0) || !OnLattice(w, step) {
			t.Errorf("%s: the release is not on the lattice of step %g", mech, step)
		}
		// The Gaussian sampler's step is about 2^-56 sigma, below the
		// resolution of float64 at the released values (about sigma): a
		// coarser lattice cannot be told apart there.
		gaussian := mech == Gaussian || mech == AnalyticGaussian
		if !gaussian && OnLattice(w, 2*step) {
			t.Errorf("%s: the release is on the lattice of step %g too: the step is not the sampler's", mech, 2*step)
		}
		// Half a step off: near zero, where float64 resolves the step;
		// and beside a released value where it does there too (not the
		// Gaussian's, whose step is below the values' resolution, so
		// that w + step/2 rounds to a neighbour on the lattice).
		off := []float64{step / 2, 3.5 * step}
		if !gaussian {
			off = append(off, w[0]+step/2)
		}
		for _, x := range off {
			if OnLattice([]float64{x}, step) {
				t.Errorf("%s: %g, half a step off the lattice of step %g, passes", mech, x, step)
			}
		}
	}
}

// TestTailNorm draws 2000 noise vectors of each mechanism with the seeded
// source and checks that none exceeds its tail bound at t = 5 (each does
// with probability at most e^-5, so 2000 draws exceed it about 13 times if
// the bound were exact; the bounds are loose, and a correct one fails this
// test with probability below 1e-6 only if it is nearly tight), and that
// the bound is not absurdly loose (below 10 times the largest draw).
func TestTailNorm(t *testing.T) {
	src := Seeded(9)
	for _, mech := range Mechanisms() {
		n, _ := Lookup(mech)
		eps, delta := 1.0, 0.0
		if !n.Pure() {
			eps, delta = 0.7, 1e-5
		}
		cal, err := n.Calibrate(eps, delta, Sensitivity{L2: 0.5}, 30)
		if err != nil {
			t.Fatal(err)
		}
		const draws = 2000
		bound := TailNorm(cal, 5)
		over, largest := 0, 0.0
		for range draws {
			w := make([]float64, cal.Dim)
			if err := n.Add(w, cal, src); err != nil {
				t.Fatal(err)
			}
			var sq float64
			for _, v := range w {
				sq += v * v
			}
			nrm := math.Sqrt(sq)
			largest = math.Max(largest, nrm)
			if nrm > bound {
				over++
			}
		}
		if over > draws/100 || bound > 10*largest {
			t.Errorf("%s: %d of %d draws above the bound %g (largest %g)", mech, over, draws, bound, largest)
		}
	}
}

func TestGammaTail(t *testing.T) {
	// d = 1: Gamma(1, 1) is exponential, P(X > x) = e^-x: the Chernoff
	// bound exp(-s + ln(1+s)) <= e^-t needs x = 1 + s > t.
	if x := GammaTail(1, 1, 10); !(x > 10 && x < 14) {
		t.Errorf("GammaTail(1, 1, 10) = %v, want in (10, 14)", x)
	}
	if a, b := GammaTail(5, 2, 3), 2*GammaTail(5, 1, 3); math.Abs(a-b) > 1e-9*b {
		t.Errorf("not linear in theta: %v, %v", a, b)
	}
}
