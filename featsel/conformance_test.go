package featsel_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/featsel"
	"github.com/stabpriv/stabpriv/perturb"
)

// The featsel conformance kit: for every mechanism of perturb's registry,
// the marginal law the mechanism provides (perturb.Noise.Marginal) must
// predict what featsel computes from it on noise that the mechanism
// actually releases: the tail at the dynamic threshold, the flip
// probability of a feature of K coupled coordinates, and the expected
// number of flips of a K x D model. A new mechanism is covered as soon as it
// is registered.
//
// Each comparison draws `draws` releases with a fixed seed and accepts
// |p_hat - p| <= 5.33 sd + 1/n, sd = sqrt(p(1-p)/n) (for the expected flips:
// 5.33 times the empirical standard error): the normal two-sided tail beyond
// 5.33 sd is 1e-7, so with a random seed a correct law fails one of the
// 5 comparisons per mechanism with probability about 5e-7 (normal
// approximation, union bound; the 1/n slack covers the discreteness).
// TestMarginalLawKitHasPower runs the same kit with a law of twice the
// drawn scale and requires it to fail for every mechanism.

// lawT is the part of *testing.T the kit reports through.
type lawT interface {
	Helper()
	Errorf(format string, args ...any)
}

// lawRecorder counts the failures of a kit run that must fail.
type lawRecorder struct{ failures int }

func (r *lawRecorder) Helper()               {}
func (r *lawRecorder) Errorf(string, ...any) { r.failures++ }

// budget is the budget of perturb's kit: eps = 1 or the largest of 0.9
// and 0.5 the mechanism accepts; delta 0 or 1e-3.
func budget(n perturb.Noise) (eps, delta float64) {
	if !n.Pure() {
		delta = 1e-3
	}
	for _, eps := range []float64{1, 0.9, 0.5} {
		if n.CheckBudget(eps, delta) == nil {
			return eps, delta
		}
	}
	return 0.5, delta
}

// checkLaw draws releases of mechanism n calibrated by cal and compares
// them with what featsel predicts from law.
func checkLaw(t lawT, n perturb.Noise, cal perturb.Calibration, law featsel.NoiseModel, seed uint64) {
	t.Helper()
	const k, d, draws, z = 3, 2, 60000, 5.33
	accept := func(what string, hits int, p float64) {
		ph := float64(hits) / draws
		if math.Abs(ph-p) > z*math.Sqrt(p*(1-p)/draws)+1.0/draws {
			t.Errorf("%s: %s: empirical %v, featsel %v (%s)", n.Name(), what, ph, p, law)
		}
	}
	// True K x D weights: feature 0 is selected at the threshold via row 2,
	// feature 1 is not.
	T, err := featsel.ThresholdSpec{Kind: featsel.Dynamic, Rate: 0.1, PerFeature: true}.Resolve(law, k)
	if err != nil {
		t.Errorf("%s: %v", n.Name(), err)
		return
	}
	cols := [][]float64{{0.1 * T, -0.5 * T, 1.3 * T}, {0.4 * T, 0, -0.8 * T}}
	w := make([]float64, k*d)
	for j, c := range cols {
		for r, v := range c {
			w[r*d+j] = v
		}
	}
	T1, err := featsel.DynamicThreshold(0.05).Resolve(law, 1)
	if err != nil {
		t.Errorf("%s: %v", n.Name(), err)
		return
	}
	tail, err := featsel.TailProb(law, T1)
	if err != nil {
		t.Errorf("%s: %v", n.Name(), err)
		return
	}
	var pFeat [2]float64
	for j, c := range cols {
		if pFeat[j], err = featsel.FeatureFlipProbability(c, T, law); err != nil {
			t.Errorf("%s: %v", n.Name(), err)
			return
		}
	}
	flips, err := featsel.ExpectedFlips(w, k, d, T, law)
	if err != nil {
		t.Errorf("%s: %v", n.Name(), err)
		return
	}
	_, ref, _ := featsel.Select(w, k, d, T)
	src := perturb.Seeded(seed)
	buf := make([]float64, k*d)
	var tailHits int
	var featHits [2]int
	var sum, sum2 float64
	for i := range draws {
		copy(buf, w)
		if err := n.Add(buf, cal, src); err != nil {
			t.Errorf("%s: %v", n.Name(), err)
			return
		}
		// One coordinate per draw, so that the draws are independent.
		if j := i % len(buf); math.Abs(buf[j]-w[j]) > T1 {
			tailHits++
		}
		_, mask, _ := featsel.Select(buf, k, d, T)
		var f float64
		for j := range mask {
			if mask[j] != ref[j] {
				featHits[j]++
				f++
			}
		}
		sum += f
		sum2 += f * f
	}
	accept("P(|N_j| > T) at the dynamic threshold", tailHits, tail)
	for j := range cols {
		accept(fmt.Sprintf("flip probability of feature %v", cols[j]), featHits[j], pFeat[j])
	}
	mean := sum / draws
	se := math.Sqrt((sum2/draws-mean*mean)/draws) + 1.0/draws
	if math.Abs(mean-flips) > z*se {
		t.Errorf("%s: expected flips: empirical %v, featsel %v (%s)", n.Name(), mean, flips, law)
	}
}

// calibration returns the calibration of n that the kit releases with, for
// the 3 x 2 model of checkLaw.
func calibration(t *testing.T, m dp.Mechanism) (perturb.Noise, perturb.Calibration) {
	n, err := perturb.Lookup(m)
	if err != nil {
		t.Fatal(err)
	}
	eps, delta := budget(n)
	cal, err := n.Calibrate(eps, delta, perturb.Sensitivity{L2: 0.3}, 6)
	if err != nil {
		t.Fatal(err)
	}
	return n, cal
}

func TestMarginalLawConformance(t *testing.T) {
	for i, m := range perturb.Mechanisms() {
		t.Run(string(m), func(t *testing.T) {
			n, cal := calibration(t, m)
			law, err := n.Marginal(cal)
			if err != nil {
				t.Fatal(err)
			}
			checkLaw(t, n, cal, law, uint64(500+i))
		})
	}
}

// TestMarginalLawKitHasPower: a law that claims twice the released noise
// must fail the kit, for every mechanism.
func TestMarginalLawKitHasPower(t *testing.T) {
	for i, m := range perturb.Mechanisms() {
		t.Run(string(m), func(t *testing.T) {
			n, cal := calibration(t, m)
			wrong := cal
			wrong.Scale *= 2
			law, err := n.Marginal(wrong)
			if err != nil {
				t.Fatal(err)
			}
			rec := &lawRecorder{}
			checkLaw(rec, n, cal, law, uint64(600+i))
			if rec.failures == 0 {
				t.Errorf("%s: the kit accepts a law of twice the released scale", m)
			}
		})
	}
}
