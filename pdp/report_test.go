package pdp

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
)

func TestSummarize(t *testing.T) {
	cases := []struct {
		in   []float64
		want Stats
	}{
		{[]float64{3}, Stats{3, 3, 3, 3, 3}},
		{[]float64{1, 2, 3, 4}, Stats{2.5, 2.5, 3.7, 3.97, 4}},
		{[]float64{5, 1, 3}, Stats{3, 3, 4.6, 4.96, 5}},
	}
	for _, tc := range cases {
		got, err := Summarize(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range [][2]float64{{got.Mean, tc.want.Mean}, {got.Median, tc.want.Median}, {got.P90, tc.want.P90}, {got.P99, tc.want.P99}, {got.Max, tc.want.Max}} {
			if math.Abs(p[0]-p[1]) > 1e-12 {
				t.Errorf("Summarize(%v) = %+v, want %+v", tc.in, got, tc.want)
				break
			}
		}
	}
	if _, err := Summarize(nil); !errors.Is(err, ErrInput) {
		t.Error("empty input accepted")
	}
	if _, err := Summarize([]float64{1, math.NaN()}); !errors.Is(err, ErrInput) {
		t.Error("NaN accepted")
	}
	m := Moments([]float64{1, 2}, 3)
	if m[0] != 1.5 || m[1] != 2.5 || m[2] != 4.5 {
		t.Errorf("Moments = %v", m)
	}
}

// TestMechanismEpsilon checks the per-instance epsilon of each mechanism
// against its closed form, and the general covariance against the
// isotropic case.
func TestMechanismEpsilon(t *testing.T) {
	d := Diff{V: []float64{0.03, -0.04}, L2: 0.05, L1: 0.07}
	gauss, err := perturb.AnalyticGaussianEpsilon(0.1, 1e-5, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		kind         perturb.Mechanism
		scale, delta float64
		want         float64
	}{
		{perturb.Laplace, 0.1, 0, 0.7},
		{perturb.Gamma, 0.1, 0, 0.5},
		{perturb.AnalyticGaussian, 0.1, 1e-5, gauss},
		{perturb.Gaussian, 0.1, 1e-5, gauss},
	}
	for _, tc := range cases {
		m, err := NewPrivacyLoss(tc.kind, tc.scale, tc.delta)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Epsilon(d)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: eps %v, want %v", tc.kind, got, tc.want)
		}
		if z, _ := m.Epsilon(Diff{V: []float64{0, 0}}); z != 0 {
			t.Errorf("%s: eps %v at a zero difference", tc.kind, z)
		}
	}
	for _, bad := range []struct {
		kind         perturb.Mechanism
		scale, delta float64
	}{{perturb.Laplace, 0.1, 1e-5}, {perturb.AnalyticGaussian, 0.1, 0}, {perturb.Gamma, 0, 0}, {"cauchy", 1, 0}} {
		if _, err := NewPrivacyLoss(bad.kind, bad.scale, bad.delta); !errors.Is(err, ErrInput) {
			t.Errorf("%+v accepted", bad)
		}
	}
	// N(0, A^{-1}/gamma) with A = I, gamma = 1/sigma^2 is N(0, sigma^2 I).
	cov := GaussianCov{A: mat.NewSymDense(2, []float64{1, 0, 0, 1}), Gamma: 100, Delta: 1e-5}
	got, err := cov.Epsilon(d)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-gauss) > 1e-9 {
		t.Errorf("covariance Gaussian eps %v, isotropic %v", got, gauss)
	}
	// A stretched along V: the whitened distance doubles.
	cov.A = mat.NewSymDense(2, []float64{4, 0, 0, 4})
	na, _ := cov.NormA(d)
	if math.Abs(na-0.1) > 1e-15 {
		t.Errorf("Delta_A = %v, want 0.1", na)
	}
	rs, rm, err := WorstCaseSensitivity(1, 1, 1e-2, 100)
	if err != nil || rs != 2 || rm != 1 {
		t.Errorf("WorstCaseSensitivity = %v, %v, %v", rs, rm, err)
	}
}

// TestReportAndPlot builds a report on synthetic data, checks its
// invariants (the DP epsilon bounds every per-instance epsilon; the report
// states the convention and the confidentiality), and draws the figure.
func TestReportAndPlot(t *testing.T) {
	const n, d, lambda = 500, 5, 1e-2
	x, y := synth(n, d, losses.Logistic{}, 0, 8)
	a := mustAnalysis(t, x, y, Config{Loss: losses.Logistic{}, Lambda: lambda})
	diffs, err := a.RemoveAll()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.RefineTop(diffs, 10); err != nil {
		t.Fatal(err)
	}
	kappa := 0.0
	for i := 0; i < n; i++ {
		kappa = math.Max(kappa, norm2(x.RawRowView(i)))
	}
	replace, remove, err := WorstCaseSensitivity(1, kappa, lambda, n)
	if err != nil {
		t.Fatal(err)
	}
	m, err := CalibratedLoss(perturb.AnalyticGaussian, 1, 1e-6, replace, d)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := m.UpperEpsilons(diffs)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, n)
	for i := range ids {
		ids[i] = 1000 + i
	}
	r, err := NewReport(a, m, lambda, ids, diffs, eps, 5)
	if err != nil {
		t.Fatal(err)
	}
	worst, _ := m.EpsilonAt(remove, 0)
	for i, d := range diffs {
		if up, _, _ := d.Upper(); up > remove*(1+1e-9) {
			t.Errorf("row %d: sensitivity bound %g above the worst case %g", i, up, remove)
		}
	}
	if r.Epsilon.Max > worst*(1+1e-9) || worst > 1+1e-9 {
		t.Errorf("max pDP %g, worst-case remove-one %g, DP 1", r.Epsilon.Max, worst)
	}
	if r.Exact != 10 || len(r.Top) != 5 || r.Top[0].ID < 1000 || r.Top[0].Epsilon != r.Epsilon.Max {
		t.Errorf("report %+v", r)
	}
	if !(r.Epsilon.Mean <= r.Epsilon.P99 && r.Epsilon.Median <= r.Epsilon.P90 && r.Moments[0] == r.Epsilon.Mean) {
		t.Errorf("stats %+v moments %v", r.Epsilon, r.Moments)
	}
	js, _ := json.Marshal(r)
	for _, want := range []string{"CONFIDENTIAL", "keeps its regularization weight", "replace_relation", `"kinds"`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	var buf bytes.Buffer
	if err := WritePNG(&buf, "synthetic logistic", eps, Reference{"DP eps", 1}, Reference{"worst-case pDP", worst}); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("\x89PNG")) {
		t.Fatal("not a PNG")
	}
	if dir := os.Getenv("PDP_PLOT_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "pdp.png"), buf.Bytes(), 0o644)
	}
	if err := WritePNG(&buf, "bad", []float64{math.NaN()}); !errors.Is(err, ErrInput) {
		t.Errorf("NaN drawn: %v", err)
	}
}

// TestGaussianCovLemma4 checks GaussianCov.Epsilon against the exact
// privacy curve of two Gaussians (Balle & Wang 2018, Theorem 8: at the
// whitened distance m, delta(eps) = Phi(m/2 - eps/m) - e^eps Phi(-m/2 -
// eps/m)) and against Wang's Lemma 4: the corrected classical form
// sqrt(gamma) Delta_A sqrt(2 log(1.25/delta)) bounds it where it is at
// most 1, while the printed gamma Delta_A sqrt(log(1.25/delta)) falls below
// the exact epsilon (so claims too little loss) at gamma = 0.5.
func TestGaussianCovLemma4(t *testing.T) {
	const delta = 1e-5
	d := Diff{V: []float64{0.03, -0.04}, L2: 0.05}
	for _, tc := range []struct{ gamma, scale float64 }{{0.5, 1}, {100, 1}, {20, 4}} {
		a := mat.NewSymDense(2, []float64{tc.scale, 0, 0, tc.scale})
		cov := GaussianCov{A: a, Gamma: tc.gamma, Delta: delta}
		eps, err := cov.Epsilon(d)
		if err != nil {
			t.Fatal(err)
		}
		na, _ := cov.NormA(d)
		m := math.Sqrt(tc.gamma) * na
		curve := distuv.UnitNormal.CDF(m/2-eps/m) - math.Exp(eps)*distuv.UnitNormal.CDF(-m/2-eps/m)
		if math.Abs(curve-delta) > 1e-9 {
			t.Errorf("gamma %v: delta(eps %v) = %v on the exact curve, want %v", tc.gamma, eps, curve, delta)
		}
		classical := m * math.Sqrt(2*math.Log(1.25/delta))
		if classical <= 1 && eps > classical {
			t.Errorf("gamma %v: eps %v above the classical %v", tc.gamma, eps, classical)
		}
		printed := tc.gamma * na * math.Sqrt(math.Log(1.25/delta))
		if tc.gamma == 0.5 && !(printed < eps) {
			t.Errorf("gamma 0.5: the printed Lemma 4 gives %v, not below the exact %v: the case does not show the misprint", printed, eps)
		}
	}
}
