package perturb

import (
	"errors"
	"math"
	"testing"
)

// TestSecureGaussianLattice checks that the secure source's Gaussian noise
// lands on its lattice, 2^(e-21) for sigma in [2^(e-1), 2^e), and so on the
// finer one Lattice states for the Gaussian mechanisms (which the support
// check of certify reads), within the noise's reach of the input; and that
// a non-finite value or sigma is refused.
func TestSecureGaussianLattice(t *testing.T) {
	for _, sigma := range []float64{1e-300, 1e-6, 0.75, 1, 3.7, 1234.5, 1e200} {
		step := SecureGaussianLattice(sigma)
		if r := step / sigma; r <= math.Exp2(-21) || r > math.Exp2(-20) {
			t.Errorf("sigma %v: step %v is %v sigma, want in (2^-21, 2^-20]", sigma, step, r)
		}
		in := []float64{0, sigma / 3, -7 * sigma, 1e5 * sigma}
		w := append([]float64(nil), in...)
		if err := Secure().AddGaussian(w, sigma); err != nil {
			t.Fatal(err)
		}
		cal := Calibration{Mechanism: AnalyticGaussian, Scale: sigma, Dim: len(w)}
		if !OnLattice(w, step) || !OnLattice(w, Lattice(cal)) {
			t.Errorf("sigma %v: %v off the lattices %v and %v", sigma, w, step, Lattice(cal))
		}
		for i := range w {
			if d := math.Abs(w[i] - in[i]); d > 10*sigma || math.Signbit(w[i]) && w[i] == 0 {
				t.Errorf("sigma %v: %v from %v", sigma, w[i], in[i])
			}
		}
	}
	if err := Secure().AddGaussian([]float64{1, math.NaN()}, 1); !errors.Is(err, ErrModel) {
		t.Errorf("a NaN value: %v, want ErrModel", err)
	}
	for _, sigma := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if err := Secure().AddGaussian([]float64{1}, sigma); !errors.Is(err, ErrScale) {
			t.Errorf("sigma %v: %v, want ErrScale", sigma, err)
		}
	}
}

// TestSecureGaussianOverflow: a sigma near the float64 range makes noisy
// values past it; the secure source refuses them (ErrModel) instead of
// releasing an infinity. At sigma = MaxFloat64/2 a value overflows when
// |Z| > 2 (probability 0.0455), so none of 64 does with probability
// 0.9545^64 < 0.06, and none in 16 repetitions with probability below
// 1e-19: the false-failure probability of the last check.
func TestSecureGaussianOverflow(t *testing.T) {
	refused := 0
	for rep := 0; rep < 16; rep++ {
		w := make([]float64, 64)
		err := Secure().AddGaussian(w, math.MaxFloat64/2)
		switch {
		case err == nil:
			for i, x := range w {
				if math.IsInf(x, 0) || math.IsNaN(x) {
					t.Fatalf("released %v at %d with no error", x, i)
				}
			}
		case errors.Is(err, ErrModel):
			refused++
		default:
			t.Fatalf("error %v, want ErrModel", err)
		}
	}
	if refused == 0 {
		t.Error("no overflow in 16 draws of 64 values at sigma = MaxFloat64/2")
	}
}
