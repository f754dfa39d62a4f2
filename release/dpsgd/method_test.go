package dpsgd

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/accountant"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// seededRelease makes a seeded DP-SGD release of testRows: expected
// batch 30 of 300 rows, 4 passes (T = 40), C = 0.7, at (1, 1e-5).
func seededRelease(t *testing.T, seed uint64) (*release.Outcome, dp.Budget) {
	t.Helper()
	X, y := testRows()
	b := dp.Budget{Epsilon: 1, Delta: 1e-5}
	cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2, Kappa: 1, Batch: 30, Passes: 4, Clip: 0.7, Eta: 0.5, Seed: 2}
	p, err := method{}.Prepare(context.Background(), release.Rows{X: X, Y: y, Config: cfg}, b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Release(context.Background(), perturb.Seeded(seed))
	if err != nil {
		t.Fatal(err)
	}
	return out, b
}

// TestDPSGDAccountant checks the certificate's numbers against an
// independent call of the accountants: the noise multiplier is the
// smallest that meets (eps/2 (1 - 1e-7), delta/(1 + exp(eps/2))) under
// add/remove-one neighbours by the PLD accountant, below RDP's; the eps it
// states is the PLD's at that multiplier, tight to 1e-6 of eps/2; its
// replace-one consequence is within the claim; the accountant and its
// citation are named.
func TestDPSGDAccountant(t *testing.T) {
	out, b := seededRelease(t, 3)
	rec := out.Certificate.Run.DPSGD
	if rec == nil {
		t.Fatal("no dp_sgd record")
	}
	// The rate the batches are drawn at: 30/300 rounded down to a
	// multiple of 2^-64, just below the float64 0.1.
	q := trainer.PoissonRate(300, 30)
	if rec.SampleRate != q || q >= 0.1 || rec.Steps != 40 || rec.NoiseStd != rec.NoiseMultiplier*0.7 {
		t.Errorf("record %+v, want q = %v, T = 40, noise std sigma C", rec, q)
	}
	dprime := b.Delta / (1 + math.Exp(b.Epsilon/2))
	sigma, _, err := accountant.NoiseMultiplierPLD(q, 40, dp.Budget{Epsilon: 0.5 * (1 - 1e-7), Delta: dprime}, accountant.PLD{})
	if err != nil {
		t.Fatal(err)
	}
	rdp, _, err := accountant.NoiseMultiplier(q, 40, dp.Budget{Epsilon: 0.5, Delta: dprime}, accountant.Improved, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := accountant.PLD{}.Epsilon(accountant.SampledGaussian{SampleRate: q, NoiseMultiplier: rec.NoiseMultiplier, Steps: 40}, rec.AddRemoveDelta)
	if err != nil {
		t.Fatal(err)
	}
	rep := g.ReplaceOne()
	switch {
	case rec.NoiseMultiplier != sigma || sigma >= rdp:
		t.Errorf("noise multiplier %v, the PLD accountant's %v, RDP's %v", rec.NoiseMultiplier, sigma, rdp)
	case rec.AddRemoveEpsilon != g.Epsilon || rec.Order != 0 || rec.Conversion != "" || rec.Accountant != PLDAccountant:
		t.Errorf("add/remove eps %v by %q (order %v, %q), the PLD's %v", rec.AddRemoveEpsilon, rec.Accountant, rec.Order, rec.Conversion, g.Epsilon)
	case g.Epsilon > 0.5 || g.Epsilon < 0.5*(1-1e-6):
		t.Errorf("add/remove eps %v, want just below eps/2 = 0.5", g.Epsilon)
	case rep.Epsilon > b.Epsilon || rep.Delta > b.Delta || rec.ReplaceOneEpsilon != rep.Epsilon || rec.ReplaceOneDelta != rep.Delta:
		t.Errorf("replace-one %+v (record %v, %v) against the claim %+v", rep, rec.ReplaceOneEpsilon, rec.ReplaceOneDelta, b)
	case out.Certificate.Citation != PLDCitation || !strings.Contains(strings.Join(out.Certificate.Assumptions, "\n"), "the accountant (PLD of the Poisson-subsampled Gaussian"):
		t.Errorf("citation %q, assumptions %q", out.Certificate.Citation, out.Certificate.Assumptions)
	}
	if math.Abs(rec.AddRemoveDelta-dprime) > 1e-20 {
		t.Errorf("add/remove delta %v, want %v", rec.AddRemoveDelta, dprime)
	}
}

// TestDPSGDRDPCertificate checks that a certificate of the RDP accountant
// (every release before the PLD one) rebuilds as it was: its noise
// multiplier RDP's, its order and conversion, its citation.
func TestDPSGDRDPCertificate(t *testing.T) {
	out, b := seededRelease(t, 3)
	cal, err := calibrate(b, 300, 30, 4, RDPAccountant)
	if err != nil {
		t.Fatal(err)
	}
	run := *out.Certificate.Run
	rec := *run.DPSGD
	rec.NoiseMultiplier, rec.NoiseStd = cal.sigma, cal.sigma*run.Clip
	run.DPSGD = &rec
	old, err := certificate(b, cal, &run, out.Certificate.Source, nil)
	if err != nil {
		t.Fatal(err)
	}
	old.NoiseSeed = out.Certificate.NoiseSeed
	r := old.Run.DPSGD
	if r.Accountant != RDPAccountant || r.Conversion != "improved" || r.Order == 0 || old.Citation != RDPCitation || r.NoiseMultiplier <= out.Certificate.Run.DPSGD.NoiseMultiplier {
		t.Fatalf("the RDP certificate: %+v, %q", r, old.Citation)
	}
	js := func(c *release.Certificate) string { b, _ := json.Marshal(c); return string(b) }
	again, _, err := method{}.Rebuild(old, release.Public{Classes: 2, K: 1, D: 4})
	if err != nil {
		t.Fatal(err)
	}
	if js(again) != js(old) {
		t.Errorf("the RDP certificate rebuilds otherwise:\n%s\n%s", js(again), js(old))
	}
	// Without the field (a file from before it) the accountant is RDP's.
	if _, err := calibrate(b, 300, 30, 4, ""); err != nil {
		t.Errorf("no accountant: %v", err)
	}
	if _, err := calibrate(b, 300, 30, 4, "moments"); !errors.Is(err, release.ErrConfig) || !strings.Contains(err.Error(), `unknown dp-sgd accountant "moments"`) {
		t.Errorf("an unknown accountant: %v", err)
	}
}

// TestDPSGDRebuildTolerance checks how certify takes a file whose noise
// multiplier or eps another build's rounding moved: by 1e-9 of them, and
// eps by 5e-8 (another build's rounding, buildTol), the file's values are
// kept (and the accountant at the file's noise multiplier is within the
// target); eps lowered by 5e-7 or 1e-4 is refused by name, and sigma
// moved by 1e-4 gives another certificate: a file cannot understate its
// eps by more than buildTol.
func TestDPSGDRebuildTolerance(t *testing.T) {
	out, _ := seededRelease(t, 3)
	pub := release.Public{Classes: 2, K: 1, D: 4}
	js := func(c *release.Certificate) string { b, _ := json.Marshal(c); return string(b) }
	for _, tc := range []struct {
		name  string
		edit  func(r *trainer.DPSGDRecord)
		equal bool
	}{
		{"sigma up 1e-9", func(r *trainer.DPSGDRecord) { r.NoiseMultiplier *= 1 + 1e-9 }, true},
		{"eps down 1e-9", func(r *trainer.DPSGDRecord) { r.AddRemoveEpsilon *= 1 - 1e-9 }, true},
		{"eps down 5e-8", func(r *trainer.DPSGDRecord) { r.AddRemoveEpsilon *= 1 - 5e-8 }, true},
		{"eps down 5e-7", func(r *trainer.DPSGDRecord) { r.AddRemoveEpsilon *= 1 - 5e-7 }, false},
		{"sigma up 1e-4", func(r *trainer.DPSGDRecord) { r.NoiseMultiplier *= 1 + 1e-4 }, false},
		{"eps down 1e-4", func(r *trainer.DPSGDRecord) { r.AddRemoveEpsilon *= 1 - 1e-4 }, false},
	} {
		c := *out.Certificate
		run := *c.Run
		rec := *run.DPSGD
		tc.edit(&rec)
		rec.NoiseStd = rec.NoiseMultiplier * run.Clip
		run.DPSGD = &rec
		c.Run = &run
		// The file as a release at those values would have written it.
		cal, err := calibrate(dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}, 300, 30, 4, rec.Accountant)
		if err != nil {
			t.Fatal(err)
		}
		cal.sigma, cal.eps = rec.NoiseMultiplier, rec.AddRemoveEpsilon
		file, err := certificate(dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}, cal, &run, c.Source, nil)
		if err != nil {
			t.Fatal(err)
		}
		file.NoiseSeed, file.WeightsSHA256 = c.NoiseSeed, c.WeightsSHA256
		again, _, err := method{}.Rebuild(file, pub)
		if err != nil {
			// An eps off the accountant's is refused by name.
			if tc.equal || !strings.HasPrefix(err.Error(), "add/remove eps ") {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		again.WeightsSHA256 = file.WeightsSHA256
		if got := js(again) == js(file); got != tc.equal {
			t.Errorf("%s: rebuilt equal %v, want %v", tc.name, got, tc.equal)
		}
	}
}

// TestDPSGDRebuildRefusesEdits checks that Rebuild (without automatic
// knobs) gives the released certificate, and another one when the noise
// multiplier, the steps, the sample rate, the passes, the expected batch
// or the clipping norm is edited.
func TestDPSGDRebuildRefusesEdits(t *testing.T) {
	out, _ := seededRelease(t, 3)
	got := out.Certificate
	pub := release.Public{Classes: 2, K: 1, D: 4}
	js := func(c *release.Certificate) string { b, _ := json.Marshal(c); return string(b) }
	want, _, err := method{}.Rebuild(got, pub)
	if err != nil {
		t.Fatal(err)
	}
	want.WeightsSHA256 = got.WeightsSHA256
	if js(want) != js(got) {
		t.Fatalf("rebuilt certificate differs:\n%s\n%s", js(want), js(got))
	}
	for name, edit := range map[string]func(r *trainer.Run){
		"noise multiplier": func(r *trainer.Run) { r.DPSGD.NoiseMultiplier *= 1.5 },
		"noise std":        func(r *trainer.Run) { r.DPSGD.NoiseStd *= 1.5 },
		"steps":            func(r *trainer.Run) { r.DPSGD.Steps-- },
		"sample rate":      func(r *trainer.Run) { r.DPSGD.SampleRate /= 2 },
		"passes":           func(r *trainer.Run) { r.Passes++ },
		"batch":            func(r *trainer.Run) { r.Batch-- },
		"clip":             func(r *trainer.Run) { r.Clip = 2 },
		"add/remove eps":   func(r *trainer.Run) { r.DPSGD.AddRemoveEpsilon /= 2 },
	} {
		forged := *got
		run := *got.Run
		rec := *run.DPSGD
		run.DPSGD = &rec
		edit(&run)
		forged.Run = &run
		again, _, err := method{}.Rebuild(&forged, pub)
		if err == nil {
			again.WeightsSHA256 = got.WeightsSHA256
			if js(again) == js(&forged) {
				t.Errorf("edited %s: the rebuilt certificate is the forged one", name)
			}
		}
	}
}

// TestDPSGDReproducibleRelease checks that a seeded release is
// bit-reproducible and that another seed gives other weights.
func TestDPSGDReproducibleRelease(t *testing.T) {
	a, _ := seededRelease(t, 3)
	b, _ := seededRelease(t, 3)
	c, _ := seededRelease(t, 4)
	if a.Certificate.WeightsSHA256 != b.Certificate.WeightsSHA256 {
		t.Error("two releases with the same seed differ")
	}
	if a.Certificate.WeightsSHA256 == c.Certificate.WeightsSHA256 {
		t.Error("another seed gives the same weights")
	}
}

// customSource is a caller-supplied source, which dp-sgd refuses for its
// coins.
type customSource struct{ perturb.Source }

func (customSource) Kind() string { return "mine" }

// TestDPSGDRefuses checks the budgets, settings and sources dp-sgd refuses.
func TestDPSGDRefuses(t *testing.T) {
	m := method{}
	if err := m.CheckBudget(dp.Budget{Epsilon: 1}); !errors.Is(err, dp.ErrBudget) {
		t.Errorf("delta = 0: %v, want ErrBudget", err)
	}
	X, y := testRows()
	cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2, Kappa: 1, Batch: 30, Passes: 4}
	if _, err := m.Prepare(context.Background(), release.Rows{X: X, Y: y, Config: cfg}, dp.Budget{Epsilon: 1, Delta: 0.01}); !errors.Is(err, dp.ErrBudget) {
		t.Errorf("delta >= 1/n: %v, want ErrBudget", err)
	}
	bad := cfg
	bad.Tolerance = 1e-3
	if err := m.CheckConfig(bad); !errors.Is(err, release.ErrConfig) {
		t.Errorf("a tolerance: %v, want release.ErrConfig", err)
	}
	p, err := m.Prepare(context.Background(), release.Rows{X: X, Y: y, Config: cfg}, dp.Budget{Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Release(context.Background(), customSource{perturb.Seeded(1)}); !errors.Is(err, release.ErrConfig) {
		t.Errorf("a custom source: %v, want release.ErrConfig", err)
	}
}

// TestDPSGDSecureDrawsEveryStep checks that a secure release draws the
// noise of every step by AddGaussian (exact, rounded to its lattice):
// perturb.Secure() is not a trainer.NormalFiller, so its runs neither
// merge the noise of the steps without rows nor use the seeded source's
// ziggurat (perturb.Seeded's source is one); and a release given no
// source is a secure one, private by its certificate, on knobs whose
// seeded run would merge (b = 1, no L1 part, projection or average).
func TestDPSGDSecureDrawsEveryStep(t *testing.T) {
	if _, ok := perturb.Secure().(trainer.NormalFiller); ok {
		t.Error("the secure source is a NormalFiller: its DP-SGD runs would merge and skip the lattice")
	}
	if _, ok := perturb.Seeded(1).(trainer.NormalFiller); !ok {
		t.Error("the seeded source is not a NormalFiller")
	}
	X, y := testRows()
	cfg := trainer.Config{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 0.01}, Kappa: 1, Batch: 1, Passes: 1, Clip: 0.7, Eta: 0.5}
	p, err := method{}.Prepare(context.Background(), release.Rows{X: X, Y: y, Config: cfg}, dp.Budget{Epsilon: 1, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Release(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := out.Certificate; c.Source != perturb.SourceSecure || !c.Private || c.NoiseSeed != nil {
		t.Errorf("a release without a source: source %q, private %v, a noise seed %v; want the secure source's private release", c.Source, c.Private, c.NoiseSeed != nil)
	}
}

// TestDPSGDCertificateText checks that a dp-sgd certificate's text does
// not print the L1 sensitivity and the uniform stability, which DP-SGD
// does not have, as values (the JSON keeps its zeros).
func TestDPSGDCertificateText(t *testing.T) {
	r, _ := seededRelease(t, 3)
	s := r.Certificate.String()
	for _, bad := range []string{"beta = 0", "L1 = 0"} {
		if strings.Contains(s, bad) {
			t.Errorf("the text prints %q:\n%s", bad, s)
		}
	}
	if !strings.Contains(s, "uniform stability beta: not applicable for dp-sgd") || !strings.Contains(s, "L1 not applicable") {
		t.Errorf("the text does not say what is not applicable:\n%s", s)
	}
}

// testRows returns 300 rows of three features uniform in [-1/2, 1/2]
// and a bias 1/2 (norm at most 1), labelled by the sign of a linear
// function with 5% of the labels flipped.
func testRows() (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(5, 7))
	X := mat.NewDense(300, 4, nil)
	y := make([]float64, 300)
	for i := range y {
		row := X.RawRowView(i)
		for j := range 3 {
			row[j] = rng.Float64() - 0.5
		}
		row[3] = 0.5
		y[i] = math.Copysign(1, row[0]-0.5*row[1]+0.1)
		if rng.Float64() < 0.05 {
			y[i] = -y[i]
		}
	}
	return X, y
}
