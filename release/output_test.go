package release

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/trainer"
)

// testModel returns a trained-looking K x d model and its run record.
func testModel(k, d int) (*trainer.Model, *trainer.Run) {
	m := &trainer.Model{Loss: "logistic", Task: losses.Binary, K: k, D: d, W: make([]float64, k*d)}
	if k > 1 {
		m.Loss, m.Task = "softmax", losses.Multiclass
	}
	for i := range m.W {
		m.W[i] = 0.1 * float64(i+1)
	}
	run := &trainer.Run{
		Loss: m.Loss, Task: m.Task.String(), N: 500, D: d, K: k,
		Kappa: 1, Lz: 1, Sz: 0.25, L: 1, BetaS: 0.25, Convex: true,
		Lambda: 0.01, Mu: 0.01, Schedule: "constant", Eta: 0.5,
		PassMaxStep: []float64{0.5, 0.5}, PassMinStep: []float64{0.5, 0.5}, StepsPerPass: 500,
		Passes: 2, Batch: 1, Dropout: 1, Sampling: "permutation",
		Seed: 7, Engine: "native", Stats: trainer.Stats{PassesDone: 2, Objective: 0.4, Duration: time.Millisecond},
	}
	return m, run
}

var testSens = perturb.Sensitivity{L2: 0.004, Beta: 0.004, Route: "permutation SGD, convex (Wu et al. 2017)"}

func TestReleaseSeededDeterministic(t *testing.T) {
	for _, mech := range perturb.Mechanisms() {
		t.Run(string(mech), func(t *testing.T) {
			cfg := Config{Mechanism: mech, Epsilon: 0.5}
			if !mech.Pure() {
				cfg.Delta = 1e-5
			}
			var outs [2]*trainer.Model
			for i := range outs {
				m, run := testModel(1, 6)
				orig := append([]float64(nil), m.W...)
				cfg.Source = perturb.Seeded(42)
				out, cert, err := Weights(m, run, testSens, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if out == m || !reflect.DeepEqual(m.W, orig) {
					t.Fatal("Release modified or returned the trained model")
				}
				if reflect.DeepEqual(out.W, orig) {
					t.Fatal("no noise added")
				}
				if cert.Source != perturb.SourceSeeded || cert.Mechanism != mech || cert.Epsilon != 0.5 {
					t.Errorf("certificate %+v", cert)
				}
				outs[i] = out
			}
			if !reflect.DeepEqual(outs[0], outs[1]) {
				t.Errorf("same seed, different releases: %v vs %v", outs[0].W, outs[1].W)
			}
		})
	}
}

func TestReleaseErrors(t *testing.T) {
	good := Config{Mechanism: perturb.Laplace, Epsilon: 1, Source: perturb.Seeded(1)}
	cases := []struct {
		name   string
		modify func(m *trainer.Model, r *trainer.Run, s *perturb.Sensitivity, c *Config) (*trainer.Model, *trainer.Run)
		want   error
	}{
		{"nil model", func(m *trainer.Model, r *trainer.Run, _ *perturb.Sensitivity, _ *Config) (*trainer.Model, *trainer.Run) {
			return nil, r
		}, perturb.ErrModel},
		{"nil run", func(m *trainer.Model, r *trainer.Run, _ *perturb.Sensitivity, _ *Config) (*trainer.Model, *trainer.Run) {
			return m, nil
		}, perturb.ErrModel},
		{"user model", func(m *trainer.Model, r *trainer.Run, _ *perturb.Sensitivity, _ *Config) (*trainer.Model, *trainer.Run) {
			r.UserModel = true
			return m, r
		}, perturb.ErrNotCertified},
		{"non-convex loss", func(m *trainer.Model, r *trainer.Run, _ *perturb.Sensitivity, _ *Config) (*trainer.Model, *trainer.Run) {
			r.Convex = false
			return m, r
		}, perturb.ErrNotCertified},
		{"weights shape", func(m *trainer.Model, r *trainer.Run, _ *perturb.Sensitivity, _ *Config) (*trainer.Model, *trainer.Run) {
			m.W = m.W[:2]
			return m, r
		}, perturb.ErrModel},
		{"run shape", func(m *trainer.Model, r *trainer.Run, _ *perturb.Sensitivity, _ *Config) (*trainer.Model, *trainer.Run) {
			r.D++
			return m, r
		}, perturb.ErrModel},
		{"NaN weight", func(m *trainer.Model, r *trainer.Run, _ *perturb.Sensitivity, _ *Config) (*trainer.Model, *trainer.Run) {
			m.W[1] = math.NaN()
			return m, r
		}, perturb.ErrModel},
		{"no mechanism", func(m *trainer.Model, r *trainer.Run, _ *perturb.Sensitivity, c *Config) (*trainer.Model, *trainer.Run) {
			c.Mechanism = ""
			return m, r
		}, perturb.ErrMechanism},
		{"eps Inf", func(m *trainer.Model, r *trainer.Run, _ *perturb.Sensitivity, c *Config) (*trainer.Model, *trainer.Run) {
			c.Epsilon = math.Inf(1)
			return m, r
		}, perturb.ErrEpsilon},
		{"delta with laplace", func(m *trainer.Model, r *trainer.Run, _ *perturb.Sensitivity, c *Config) (*trainer.Model, *trainer.Run) {
			c.Delta = 1e-6
			return m, r
		}, perturb.ErrDelta},
		{"classical eps >= 1", func(m *trainer.Model, r *trainer.Run, _ *perturb.Sensitivity, c *Config) (*trainer.Model, *trainer.Run) {
			c.Mechanism, c.Delta = perturb.Gaussian, 1e-6
			return m, r
		}, perturb.ErrClassicalRange},
		{"zero sensitivity", func(m *trainer.Model, r *trainer.Run, s *perturb.Sensitivity, _ *Config) (*trainer.Model, *trainer.Run) {
			s.L2 = 0
			return m, r
		}, perturb.ErrSensitivity},
		{"replace-one in other words", func(m *trainer.Model, r *trainer.Run, s *perturb.Sensitivity, _ *Config) (*trainer.Model, *trainer.Run) {
			s.Neighbouring = "replace one"
			return m, r
		}, perturb.ErrSensitivity},
		{"add-remove neighbours", func(m *trainer.Model, r *trainer.Run, s *perturb.Sensitivity, _ *Config) (*trainer.Model, *trainer.Run) {
			s.Neighbouring = "add-remove"
			return m, r
		}, perturb.ErrSensitivity},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, run := testModel(1, 4)
			s, c := testSens, good
			mm, rr := tc.modify(m, run, &s, &c)
			out, cert, err := Weights(mm, rr, s, c)
			if !errors.Is(err, tc.want) || out != nil || cert != nil {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "perturb:") {
				t.Errorf("error %q lacks the perturb: prefix", err)
			}
		})
	}
}

func TestReleaseSecureSourceRefusal(t *testing.T) {
	// The secure perturb.Laplace sampler refuses eps < 2^-50: the budget
	// check refuses it first, for every source, and the release fails
	// cleanly.
	m, run := testModel(1, 3)
	if _, _, err := Weights(m, run, testSens, Config{Mechanism: perturb.Laplace, Epsilon: 1e-20}); !errors.Is(err, perturb.ErrEpsilon) {
		t.Fatalf("err = %v, want perturb.ErrEpsilon", err)
	}
}

func TestReleaseMulticlassOneCertificate(t *testing.T) {
	m, run := testModel(3, 4)
	out, cert, err := Weights(m, run, testSens, Config{Mechanism: perturb.Laplace, Epsilon: 2, Source: perturb.Seeded(5)})
	if err != nil {
		t.Fatal(err)
	}
	if out.K != 3 || out.D != 4 || len(out.W) != 12 {
		t.Fatalf("released model is %dx%d with %d weights", out.K, out.D, len(out.W))
	}
	if cert.Dim != 12 || cert.Composition != nil {
		t.Errorf("certificate dim %d, composition %v; want 12, none", cert.Dim, cert.Composition)
	}
	if want := math.Sqrt(12) * testSens.L2; math.Abs(cert.L1Sensitivity-want) > 1e-15 || math.Abs(cert.NoiseScale-want/2) > 1e-15 {
		t.Errorf("L1 %v and b %v, want %v and %v", cert.L1Sensitivity, cert.NoiseScale, want, want/2)
	}
}

func TestReleaseOneVsRest(t *testing.T) {
	const k = 3
	models := make([]*trainer.Model, k)
	runs := make([]*trainer.Run, k)
	sens := make([]perturb.Sensitivity, k)
	for i := range models {
		models[i], runs[i] = testModel(1, 4)
		sens[i] = testSens
	}
	cfg := Config{Mechanism: perturb.AnalyticGaussian, Epsilon: 1.5, Delta: 3e-6, Source: perturb.Seeded(9)}

	outs, certs, err := OneVsRest(models, runs, sens, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range certs {
		if outs[i] == nil || c.Epsilon != 0.5 || c.Delta != 1e-6 || c.Composition == nil ||
			c.Composition.Parts != k || c.Composition.Index != i || c.Composition.TotalEpsilon != 1.5 || c.Composition.TotalDelta != 3e-6 {
			t.Errorf("certificate %d: eps %v delta %v composition %+v", i, c.Epsilon, c.Delta, c.Composition)
		}
		if !strings.Contains(c.String(), "part") {
			t.Errorf("certificate %d text does not explain the split", i)
		}
	}
	if _, _, err := OneVsRest(models[:1], runs[:1], sens[:1], cfg); !errors.Is(err, perturb.ErrModel) {
		t.Errorf("K = 1: err = %v", err)
	}
}

type constSource struct{ perturb.Source }

func (constSource) Kind() string { return "my source" }

func TestCertificateSources(t *testing.T) {
	m, run := testModel(1, 4)
	_, cert, err := Weights(m, run, testSens, Config{Mechanism: perturb.Gamma, Epsilon: 1})
	if err != nil {
		t.Fatal(err)
	}
	if cert.Source != perturb.SourceSecure || !strings.Contains(strings.Join(cert.Assumptions, "\n"), "floating-point") {
		t.Errorf("default source: %q, assumptions %q", cert.Source, cert.Assumptions)
	}
	m, run = testModel(1, 4)
	_, cert, err = Weights(m, run, testSens, Config{Mechanism: perturb.Gamma, Epsilon: 1, Source: constSource{perturb.Seeded(1)}})
	if err != nil {
		t.Fatal(err)
	}
	if cert.Source != "custom: my source" {
		t.Errorf("custom source recorded as %q", cert.Source)
	}
}

func TestCertificateNeighbouringDetail(t *testing.T) {
	m, run := testModel(1, 3)
	sens := testSens
	sens.Neighbouring = "replace-one (same n); both runs share the seed"
	_, cert, err := Weights(m, run, sens, Config{Mechanism: perturb.Gamma, Epsilon: 1, Source: perturb.Seeded(1)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(cert.Assumptions, "\n"), "both runs share the seed") {
		t.Errorf("the relation's detail is not in the certificate: %q", cert.Assumptions)
	}
}

func TestCertificateJSONRoundTrip(t *testing.T) {
	m, run := testModel(2, 3)
	note := "preprocessing statistics fitted on the training data are not privatized"
	_, cert, err := Weights(m, run, testSens, Config{Mechanism: perturb.AnalyticGaussian, Epsilon: 0.8, Delta: 1e-5, Source: perturb.Seeded(3), Notes: []string{note}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(cert, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var back Certificate
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, cert) {
		t.Errorf("round trip changed the certificate:\n%+v\n%+v", back, *cert)
	}
	js := string(b)
	for _, want := range []string{
		`"version": "stabpriv-certificate/2"`, `"private": false`, `"weights_sha256": "`, `"mechanism": "gaussian-analytic"`, `"epsilon": 0.8`, `"delta": 0.00001`,
		`"l2_sensitivity": 0.004`, `"sensitivity_route": "permutation SGD`, `"beta": 0.004`, `"noise_scale_name": "sigma"`,
		`"neighbouring": "replace-one: S and S' of equal size differ in one example"`, `"source": "seeded: not for release"`,
		`"run": {`, `"n": 500`, `"kappa": 1`, `"lipschitz": 1`, `"smoothness": 0.25`, `"mu": 0.01`, `"eta": 0.5`,
		`"passes": 2`, `"batch": 1`, `"clip": 0`, `"dropout": 1`, note, `"citation": "Balle \u0026 Wang (2018)`,
	} {
		if !strings.Contains(js, want) {
			t.Errorf("certificate JSON lacks %s:\n%s", want, js)
		}
	}
	// The certificate holds a copy of the run.
	run.N = 1
	run.PassMaxStep[0] = 99
	if cert.N != 500 || cert.PassMaxStep[0] != 0.5 {
		t.Error("the certificate shares the caller's run record")
	}
	s := cert.String()
	for _, want := range []string{"NOT PRIVATE", "eps = 0.8, delta = 1e-05", "replace-one", "sigma =", "L2 = 0.004", "n = 500", "kappa = 1", "what the claim does not cover", note, "seeded: not for release", "Balle & Wang"} {
		if !strings.Contains(s, want) {
			t.Errorf("certificate text lacks %q:\n%s", want, s)
		}
	}
}

// TestCertificateWithholdsDataStatistics checks that a certificate publishes
// the constants of the run but not the statistics of the non-private weights
// and the data (objective, gradient norm, clipped rows, time), nor, when a
// tolerance chose the stopping pass, the passes done and their steps.
func TestCertificateWithholdsDataStatistics(t *testing.T) {
	for _, tol := range []float64{0, 1e-3} {
		m := &trainer.Model{Loss: "logistic", K: 1, D: 2, W: []float64{0.5, -0.25}}
		run := &trainer.Run{
			Loss: "logistic", Task: "binary", N: 100, D: 2, K: 1, Kappa: 1, Lz: 1, Sz: 0.25, L: 1, BetaS: 0.25,
			Convex: true, Lambda: 0.1, Mu: 0.1, Schedule: "constant", Eta: 1, Passes: 3,
			PassMaxStep: []float64{1, 1, 1}, PassMinStep: []float64{1, 1, 1}, StepsPerPass: 100, Batch: 1, Dropout: 1,
			Tolerance: tol,
			Stats:     trainer.Stats{PassesDone: 3, Objective: 0.42, GradNorm: 1e-4, Converged: tol > 0, ClippedRows: 7, Duration: time.Second},
		}
		_, cert, err := Weights(m, run, perturb.Sensitivity{L2: 0.2, Route: "test"}, Config{Mechanism: perturb.Gamma, Epsilon: 1, Source: perturb.Seeded(1)})
		if err != nil {
			t.Fatal(err)
		}
		if cert.Stats != (trainer.Stats{}) {
			t.Errorf("tol %v: certificate holds the statistics %+v", tol, cert.Stats)
		}
		js, err := json.Marshal(cert.Run)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"objective", "grad_norm", "converged", "clipped", "passes_done", "duration"} {
			if strings.Contains(strings.ToLower(string(js)), key) {
				t.Errorf("tol %v: run record of the certificate names %q: %s", tol, key, js)
			}
		}
		if cert.N != 100 || cert.Lambda != 0.1 || cert.Eta != 1 || cert.Passes != 3 {
			t.Errorf("tol %v: certificate lost constants: %+v", tol, cert.Run)
		}
		if (len(cert.PassMaxStep) == 0) != (tol > 0) {
			t.Errorf("tol %v: step records %v", tol, cert.PassMaxStep)
		}
		if run.Stats.Objective != 0.42 || run.Stats.ClippedRows != 7 {
			t.Errorf("tol %v: Release modified the caller's run record", tol)
		}
		if !slices.ContainsFunc(cert.Assumptions, func(a string) bool { return strings.Contains(a, "withholds") }) {
			t.Errorf("tol %v: no assumption says what is withheld: %q", tol, cert.Assumptions)
		}
	}
}
