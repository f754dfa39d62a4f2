package release

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets/synthetic"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// trainSynthetic trains a logistic model on 300 seeded synthetic rows of
// norm <= 1 in 5 dimensions and returns the model and its run record.
func trainSynthetic(t *testing.T, cfg trainer.Config) (*trainer.Model, *trainer.Run) {
	t.Helper()
	ds, _, err := synthetic.Logistic(300, 5, 3, synthetic.LogisticOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Loss, cfg.Kappa, cfg.Seed = losses.Logistic{}, 1, 9
	if cfg.Passes == 0 {
		cfg.Passes = 3
	}
	tr, err := trainer.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, run, err := tr.Train(context.Background(), ds.X, ds.Y)
	if err != nil {
		t.Fatal(err)
	}
	return m, run
}

// releaseFromReport is the whole glue: analyze the run, turn the report into
// a sensitivity and release with it.
func releaseFromReport(m *trainer.Model, run *trainer.Run, cfg Config) (*trainer.Model, *Certificate, error) {
	rep, err := stability.Analyze(run)
	if err != nil {
		return nil, nil, err
	}
	sens, notes, err := FromReport(rep)
	if err != nil {
		return nil, nil, err
	}
	cfg.Notes = append(notes, cfg.Notes...)
	return Weights(m, run, sens, cfg)
}

func TestFromReportRoute(t *testing.T) {
	const mu = 0.05
	tests := []struct {
		name  string
		cfg   trainer.Config
		route stability.RouteID
		// want is the closed-form Delta, 0 when the recursion has none.
		want float64
	}{
		{
			name:  "bounded inverse-t, 2L/(mu b m)",
			cfg:   trainer.Config{Reg: regularizers.ElasticNet{Lambda: mu}, Schedule: trainer.BoundedInverseT, Batch: 4},
			route: stability.RouteStronglyConvexSGD,
			want:  2 / (mu * 4 * 75),
		},
		{
			name:  "mu = 0, constant step 2",
			cfg:   trainer.Config{Eta: 2, Passes: 2},
			route: stability.RouteConvexSGD,
			want:  2 * 2 * 1 * 2, // 2 k L eta / b
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, run := trainSynthetic(t, tt.cfg)
			rep, err := stability.Analyze(run)
			if err != nil {
				t.Fatal(err)
			}
			sens, notes, err := FromReport(rep)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Chosen != tt.route {
				t.Fatalf("chosen route %v, want %v", rep.Chosen, tt.route)
			}
			if sens.L2 != rep.Delta || sens.Beta != rep.Beta || sens.Route != tt.route.String() || sens.Neighbouring != rep.Neighbours {
				t.Errorf("sensitivity %+v, report Delta %v beta %v neighbours %q", sens, rep.Delta, rep.Beta, rep.Neighbours)
			}
			// The report multiplies every bound by 1 + RoundingSlack.
			if tt.want != 0 && math.Abs(sens.L2-tt.want*(1+stability.RoundingSlack)) > 1e-12*tt.want {
				t.Errorf("L2 = %v, want %v", sens.L2, tt.want)
			}
			if err := sens.Validate(); err != nil {
				t.Error(err)
			}
			if len(notes) != len(rep.Assumptions)+1 {
				t.Fatalf("%d notes for %d assumptions: %q", len(notes), len(rep.Assumptions), notes)
			}
			for i, a := range rep.Assumptions {
				if notes[i] != a {
					t.Errorf("note %d = %q, want %q", i, notes[i], a)
				}
			}
			if last := notes[len(notes)-1]; !strings.Contains(last, tt.route.String()) || !strings.Contains(last, "Delta = ") {
				t.Errorf("route note %q", last)
			}
		})
	}
}

func TestFromReportNoRoute(t *testing.T) {
	tests := []struct {
		name    string
		cfg     trainer.Config
		reasons []string // one per route, in the report's order
	}{
		{
			name: "mu = 0, constant step above 2/beta_s",
			cfg:  trainer.Config{Eta: 10},
			reasons: []string{
				"mu = lambda*(1-l1 ratio) = 0",
				"mu = lambda*(1-l1 ratio) = 0",
				"exceeds 2/(beta_s + mu)",
				"the steps do not contract",
			},
		},
		{
			name: "mu > 0, step above every limit, minibatches",
			cfg:  trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.01}, Eta: 9},
			reasons: []string{
				"full-batch",
				"full-batch",
				"exceeds 2/(beta_s + mu)",
				"exceeds 2/(beta_s + 2 mu)",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, run := trainSynthetic(t, tt.cfg)
			rep, err := stability.Analyze(run)
			if err != nil {
				t.Fatal(err)
			}
			sens, notes, err := FromReport(rep)
			if !errors.Is(err, perturb.ErrSensitivity) || !errors.Is(err, stability.ErrNoRoute) || !errors.Is(err, stability.ErrNotApplicable) {
				t.Fatalf("error %v, want perturb.ErrSensitivity, stability.ErrNoRoute and ErrNotApplicable", err)
			}
			if sens != (perturb.Sensitivity{}) || notes != nil {
				t.Errorf("sensitivity %+v and notes %q beside an error", sens, notes)
			}
			for i, r := range stability.Routes {
				if msg := err.Error(); !strings.Contains(msg, "route "+r.String()+" not applicable: ") || !strings.Contains(msg, tt.reasons[i]) {
					t.Errorf("error does not give route %v's reason %q:\n%v", r, tt.reasons[i], msg)
				}
			}
			// The glue stops before the release.
			out, cert, err := releaseFromReport(m, run, Config{Mechanism: perturb.Gamma, Epsilon: 1, Source: perturb.Seeded(1)})
			if err == nil || out != nil || cert != nil {
				t.Fatalf("released %v with %v (error %v)", out, cert, err)
			}
		})
	}
}

func TestFromReportNil(t *testing.T) {
	if _, _, err := FromReport(nil); !errors.Is(err, perturb.ErrSensitivity) {
		t.Errorf("nil report: %v, want perturb.ErrSensitivity", err)
	}
	// A report whose chosen bound is not positive cannot back a release.
	rep := &stability.Report{
		Routes: []stability.Route{{Route: stability.RouteERM, Applies: true}},
		Chosen: stability.RouteERM, Neighbours: stability.Neighbours,
	}
	if _, _, err := FromReport(rep); !errors.Is(err, perturb.ErrSensitivity) {
		t.Errorf("Delta = 0: %v, want perturb.ErrSensitivity", err)
	}
}

// TestTrainAnalyzeRelease is the whole pipeline: train, analyze, release
// with the seeded source, and check what the certificate records.
func TestTrainAnalyzeRelease(t *testing.T) {
	m, run := trainSynthetic(t, trainer.Config{
		Reg: regularizers.ElasticNet{Lambda: 0.05, L1Ratio: 0.2}, Schedule: trainer.BoundedInverseT,
		Batch: 2, Clip: 0.8, Dropout: 0.9,
	})
	rep, err := stability.Analyze(run)
	if err != nil {
		t.Fatal(err)
	}
	const note = "features were generated synthetically"
	cfg := Config{Mechanism: perturb.Gamma, Epsilon: 1, Source: perturb.Seeded(5), Notes: []string{note}}
	priv, cert, err := releaseFromReport(m, run, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if priv == m || len(priv.W) != len(m.W) || priv.W[0] == m.W[0] {
		t.Errorf("released weights %v from %v", priv.W, m.W)
	}
	data, err := json.Marshal(cert)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Mechanism   string   `json:"mechanism"`
		Epsilon     float64  `json:"epsilon"`
		Delta       *float64 `json:"delta"`
		L2          float64  `json:"l2_sensitivity"`
		Route       string   `json:"sensitivity_route"`
		Beta        float64  `json:"beta"`
		Source      string   `json:"source"`
		Assumptions []string `json:"not_covered"`
		Run         map[string]any
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Mechanism != "gamma" || doc.Epsilon != 1 || doc.Delta == nil || *doc.Delta != 0 {
		t.Errorf("claim %s eps %v delta %v, want gamma 1 0", doc.Mechanism, doc.Epsilon, doc.Delta)
	}
	if doc.L2 != rep.Delta || doc.Beta != rep.Beta || doc.Route != "strongly-convex-sgd" || doc.Source != perturb.SourceSeeded {
		t.Errorf("L2 %v beta %v route %q source %q; report Delta %v beta %v", doc.L2, doc.Beta, doc.Route, doc.Source, rep.Delta, rep.Beta)
	}
	for key, want := range map[string]float64{
		"n": float64(run.N), "kappa": run.Kappa, "lipschitz": run.L, "mu": run.Mu, "eta": run.Eta,
		"passes": float64(run.Passes), "batch": 2, "clip": 0.8, "dropout": 0.9,
	} {
		if got, ok := doc.Run[key].(float64); !ok || got != want {
			t.Errorf("run %s = %v, want %v", key, doc.Run[key], want)
		}
	}
	text := strings.Join(doc.Assumptions, "\n")
	for _, want := range append(rep.Assumptions, note, "not for release") {
		if !strings.Contains(text, want) {
			t.Errorf("assumptions lack %q:\n%s", want, text)
		}
	}
}
