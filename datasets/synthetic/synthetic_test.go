package synthetic

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Statistical checks below use 5-sigma tolerances: under the model each
// fails with probability below 1e-6 (normal approximation with n = 20000).

// checkUnitBallRows checks ||x|| <= 1 for every row and that the radii look
// uniform in the ball: P(||x|| <= 0.5^(1/d)) = 1/2.
func checkUnitBallRows(t *testing.T, x *mat.Dense) {
	t.Helper()
	n, d := x.Dims()
	median := math.Pow(0.5, 1/float64(d))
	inside := 0
	for i := range n {
		r := floats.Norm(x.RawRowView(i), 2)
		if r > 1+1e-12 {
			t.Fatalf("row %d has norm %v > 1", i, r)
		}
		if r <= median {
			inside++
		}
	}
	if frac := float64(inside) / float64(n); math.Abs(frac-0.5) > 5*0.5/math.Sqrt(float64(n)) {
		t.Errorf("fraction of rows within the median radius %.4f, want 0.5", frac)
	}
}

func TestLogistic(t *testing.T) {
	const n, d = 20000, 5
	ds, theta, err := Logistic(n, d, 3, LogisticOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkUnitBallRows(t, ds.X)
	if norm := floats.Norm(theta, 2); math.Abs(norm-2*math.Sqrt(d)) > 1e-12 {
		t.Errorf("||theta|| = %v, want the default 2*sqrt(d)", norm)
	}
	// Calibration: the number of positives minus the sum of the model
	// probabilities is a sum of n independent centred terms of variance
	// p(1-p) <= 1/4.
	diff, hi, hiDiff := 0.0, 0, 0.0
	for i := range n {
		z := floats.Dot(ds.X.RawRowView(i), theta)
		p := 1 / (1 + math.Exp(-z))
		pos := 0.0
		if ds.Y[i] == 1 {
			pos = 1
		} else if ds.Y[i] != -1 {
			t.Fatalf("label %v", ds.Y[i])
		}
		diff += pos - p
		if z > 1 {
			hi++
			hiDiff += pos - p
		}
	}
	if math.Abs(diff) > 5*0.5*math.Sqrt(n) {
		t.Errorf("positives minus expected = %.1f, beyond 5 sigma", diff)
	}
	if hi == 0 || math.Abs(hiDiff) > 5*0.5*math.Sqrt(float64(hi)) {
		t.Errorf("on %d rows with margin > 1, positives minus expected = %.1f", hi, hiDiff)
	}

	again, theta2, err := Logistic(n, d, 3, LogisticOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(ds.X, again.X) || !floats.Equal(ds.Y, again.Y) || !floats.Equal(theta, theta2) {
		t.Error("same seed gave different data")
	}
	other, _, err := Logistic(n, d, 4, LogisticOptions{ThetaNorm: 1})
	if err != nil {
		t.Fatal(err)
	}
	if mat.Equal(ds.X, other.X) {
		t.Error("another seed gave the same rows")
	}
}

func TestLinearGaussian(t *testing.T) {
	const n, d, sigma = 20000, 4, 0.5
	ds, theta, err := LinearGaussian(n, d, sigma, 9)
	if err != nil {
		t.Fatal(err)
	}
	checkUnitBallRows(t, ds.X)
	if ds.Classes != nil {
		t.Errorf("Classes = %v, want nil for regression", ds.Classes)
	}
	if norm := floats.Norm(theta, 2); math.Abs(norm-1) > 1e-12 {
		t.Errorf("||theta|| = %v, want 1", norm)
	}
	res := make([]float64, n)
	for i := range n {
		res[i] = ds.Y[i] - floats.Dot(ds.X.RawRowView(i), theta)
	}
	mean := floats.Sum(res) / n
	if math.Abs(mean) > 5*sigma/math.Sqrt(n) {
		t.Errorf("residual mean %v, want 0", mean)
	}
	v := 0.0
	for _, r := range res {
		v += (r - mean) * (r - mean)
	}
	v /= n - 1
	if math.Abs(v-sigma*sigma) > 5*sigma*sigma*math.Sqrt(2.0/n) {
		t.Errorf("residual variance %v, want %v", v, sigma*sigma)
	}

	exact, theta0, err := LinearGaussian(10, 3, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if got := floats.Dot(exact.X.RawRowView(i), theta0); math.Abs(got-exact.Y[i]) > 1e-15 {
			t.Fatalf("sigma = 0: y = %v, <theta, x> = %v", exact.Y[i], got)
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		fn   func() error
	}{
		{"logistic n zero", func() error { _, _, err := Logistic(0, 2, 1, LogisticOptions{}); return err }},
		{"logistic d negative", func() error { _, _, err := Logistic(5, -1, 1, LogisticOptions{}); return err }},
		{"logistic NaN norm", func() error { _, _, err := Logistic(5, 2, 1, LogisticOptions{ThetaNorm: math.NaN()}); return err }},
		{"logistic negative norm", func() error { _, _, err := Logistic(5, 2, 1, LogisticOptions{ThetaNorm: -1}); return err }},
		{"gaussian negative sigma", func() error { _, _, err := LinearGaussian(5, 2, -1, 1); return err }},
		{"gaussian infinite sigma", func() error { _, _, err := LinearGaussian(5, 2, math.Inf(1), 1); return err }},
		{"gaussian too large", func() error { _, _, err := LinearGaussian(math.MaxInt32, 4, 1, 1); return err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.fn(); !errors.Is(err, ErrConfig) {
				t.Fatalf("err = %v, want ErrConfig", err)
			}
		})
	}
}
