package stability

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/stabpriv/stabpriv/trainer"
)

func TestClosedForms(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name string
		f    func() (float64, error)
		want float64
		err  error
	}{
		{"erm", func() (float64, error) { return ERMDelta(1, 0.1, 100) }, 0.2, nil},
		{"erm L=2", func() (float64, error) { return ERMDelta(2, 0.5, 40) }, 0.2, nil},
		{"erm mu=0", func() (float64, error) { return ERMDelta(1, 0, 100) }, 0, ErrNotApplicable},
		{"erm n=0", func() (float64, error) { return ERMDelta(1, 0.1, 0) }, 0, ErrInvalid},
		{"erm L<0", func() (float64, error) { return ERMDelta(-1, 0.1, 10) }, 0, ErrInvalid},
		{"erm NaN", func() (float64, error) { return ERMDelta(math.NaN(), 0.1, 10) }, 0, ErrInvalid},
		{"remark8", func() (float64, error) { return Remark8Delta(0.2, 0.1) }, 0.4, nil},
		{"remark8 Inf", func() (float64, error) { return Remark8Delta(inf, 0.01) }, 0, ErrInvalid},
		{"remark8 negative", func() (float64, error) { return Remark8Delta(0.2, -0.01) }, 0, ErrInvalid},
		// eta mu = 0.1/0.35, (1 - eta mu)^3 L/mu with L = 2, mu = 0.1.
		{"prox-gd conv", func() (float64, error) { return ProxGDConvergence(2, 0.25, 0.1, 1/0.35, 3) }, math.Pow(0.25/0.35, 3) * 20, nil},
		{"prox-gd conv k=0", func() (float64, error) { return ProxGDConvergence(1, 0.25, 0.1, 1, 0) }, 10, nil},
		{"prox-gd conv step", func() (float64, error) { return ProxGDConvergence(1, 0.25, 0.1, 1/0.35*1.001, 3) }, 0, ErrNotApplicable},
		{"prox-gd conv mu=0", func() (float64, error) { return ProxGDConvergence(1, 0.25, 0, 1, 3) }, 0, ErrNotApplicable},
		{"prox-gd conv eta=0", func() (float64, error) { return ProxGDConvergence(1, 0.25, 0.1, 0, 3) }, 0, ErrInvalid},
		{"prox-gd conv k<0", func() (float64, error) { return ProxGDConvergence(1, 0.25, 0.1, 1, -1) }, 0, ErrInvalid},
		{"prox-gd conv NaN", func() (float64, error) { return ProxGDConvergence(math.NaN(), 0.25, 0.1, 1, 1) }, 0, ErrInvalid},
		{"theorem7", func() (float64, error) { return Theorem7Delta(0.02, 0.01) }, 2, nil},
		{"theorem7 mu=0", func() (float64, error) { return Theorem7Delta(0.02, 0) }, 0, ErrNotApplicable},
		{"convex 2kL eta/b", func() (float64, error) { return ConvexSGDDelta(1, 0.25, 0, 4, []float64{0.5, 0.5, 0.5}) }, 0.75, nil},
		{"convex decreasing", func() (float64, error) { return ConvexSGDDelta(2, 1, 0, 1, []float64{1, 0.5, 0.25}) }, 7, nil},
		{"convex limit with mu", func() (float64, error) { return ConvexSGDDelta(1, 1, 1, 1, []float64{1}) }, 2, nil},
		{"convex step too large", func() (float64, error) { return ConvexSGDDelta(1, 1, 1, 1, []float64{1.01}) }, 0, ErrNotApplicable},
		{"convex b=0", func() (float64, error) { return ConvexSGDDelta(1, 1, 0, 0, []float64{1}) }, 0, ErrInvalid},
		{"convex no passes", func() (float64, error) { return ConvexSGDDelta(1, 1, 0, 1, nil) }, 0, ErrInvalid},
		// eta mu = 1/2, m = 1: 2*1*1*(1 + 1/2 + 1/4).
		{"strongly convex", func() (float64, error) { return StronglyConvexSGDDelta(1, 0, 0.5, 1, 1, 1, 3) }, 3.5, nil},
		// m = ceil(5/2) = 3: (2*0.5/2)*(1 + 0.9^3).
		{"strongly convex b=2", func() (float64, error) { return StronglyConvexSGDDelta(1, 1, 0.2, 0.5, 5, 2, 2) }, 0.5 * (1 + 0.729), nil},
		{"strongly convex mu=0", func() (float64, error) { return StronglyConvexSGDDelta(1, 1, 0, 0.5, 5, 2, 2) }, 0, ErrNotApplicable},
		{"strongly convex step", func() (float64, error) { return StronglyConvexSGDDelta(1, 1, 0.5, 1.01, 5, 2, 2) }, 0, ErrNotApplicable},
		{"strongly convex b>n", func() (float64, error) { return StronglyConvexSGDDelta(1, 1, 0.5, 0.1, 5, 6, 2) }, 0, ErrInvalid},
		{"decreasing", func() (float64, error) { return DecreasingStepDelta(1, 0.25, 0.1, 0.35, 100, 1) }, 0.2, nil},
		{"decreasing b divides n", func() (float64, error) { return DecreasingStepDelta(1, 0.25, 0.1, 0.35, 100, 4) }, 0.2, nil},
		{"decreasing short batch", func() (float64, error) { return DecreasingStepDelta(1, 0.25, 0.1, 0.35, 10, 3) }, 2 / (0.1 * 12), nil},
		{"decreasing cap small", func() (float64, error) { return DecreasingStepDelta(1, 1, 0.1, 0.5, 100, 1) }, 0, ErrNotApplicable},
		{"enhanced", func() (float64, error) { return EnhancedEpsilon(1, 0.4, 0.1) }, 0.25, nil},
		{"enhanced base 0", func() (float64, error) { return EnhancedEpsilon(1, 0, 0.1) }, 0, ErrInvalid},
		{"enhanced eps Inf", func() (float64, error) { return EnhancedEpsilon(inf, 1, 0.1) }, 0, ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.f()
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !relClose(got, tc.want, 1e-12) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// Theorem 7 fed with the exact minimizer's stability is looser than route 1.
func TestTheorem7LooserThanERM(t *testing.T) {
	for _, n := range []int{1, 2, 10, 1000, 1e6} {
		erm, _ := ERMDelta(1, 0.1, n)
		t7, err := Theorem7Delta(1*erm, 0.1) // beta of l alone: smaller than that of l + R
		if err != nil {
			t.Fatal(err)
		}
		if t7 < erm || n > 1 && t7 <= erm {
			t.Errorf("n = %d: theorem 7 gives %v <= route 1's %v", n, t7, erm)
		}
		if want := 2 / (0.1 * math.Sqrt(float64(n))); !relClose(t7, want, 1e-12) {
			t.Errorf("n = %d: theorem 7 gives %v, want 2L/(mu sqrt n) = %v", n, t7, want)
		}
	}
}

// The recursion of Analyze reproduces the closed forms on hand-built runs.
func TestAnalyzeMatchesClosedForms(t *testing.T) {
	t.Run("convex constant", func(t *testing.T) {
		r := handRun()
		r.Batch = 4
		fillSteps(r)
		rep := mustAnalyze(t, r)
		want := (1 + RoundingSlack) * 2 * 5 * 1 * 0.5 / 4.0
		if e, _ := rep.Lookup(RouteConvexSGD); !e.Applies || !relClose(e.Delta, want, 1e-12) {
			t.Errorf("route 3 = %+v, want %v", e, want)
		}
		if rep.Chosen != RouteConvexSGD {
			t.Errorf("chosen %v, want route 3", rep.Chosen)
		}
	})
	t.Run("convex averaged", func(t *testing.T) {
		r := handRun()
		r.Average = true
		rep := mustAnalyze(t, r)
		want := (1 + RoundingSlack) * 2 * 0.5 * (5 + 1) / 2.0 // mean over passes of (p+1) eta
		if e, _ := rep.Lookup(RouteConvexSGD); !relClose(e.Delta, want, 1e-12) {
			t.Errorf("route 3 averaged = %v, want %v", e.Delta, want)
		}
	})
	t.Run("strongly convex constant", func(t *testing.T) {
		r := handRun()
		r.Lambda, r.Batch, r.Eta = 0.2, 3, 1
		fillSteps(r)
		rep := mustAnalyze(t, r)
		want, err := StronglyConvexSGDDelta(1, 0.25, 0.2, 1, 100, 3, 5)
		if err != nil {
			t.Fatal(err)
		}
		if e, _ := rep.Lookup(RouteStronglyConvexSGD); !e.Applies || !relClose(e.Delta, (1+RoundingSlack)*want, 1e-12) {
			t.Errorf("route 4 = %+v, want %v", e, want)
		}
		if rep.Chosen != RouteStronglyConvexSGD {
			t.Errorf("chosen %v, want route 4", rep.Chosen)
		}
	})
	t.Run("bounded inverse t", func(t *testing.T) {
		for _, b := range []int{1, 3, 10} {
			r := handRun()
			r.Lambda, r.Batch, r.Schedule, r.Passes = 0.05, b, trainer.BoundedInverseT.String(), 8
			fillSteps(r)
			rep := mustAnalyze(t, r)
			closed, err := DecreasingStepDelta(1, 0.25, 0.05, 0.3, 100, b)
			if err != nil {
				t.Fatal(err)
			}
			e, _ := rep.Lookup(RouteStronglyConvexSGD)
			if !e.Applies || e.Delta > closed*(1+RoundingSlack)*(1+1e-12) || e.Delta < 0.9*closed {
				t.Errorf("b = %d: route 4 = %v, want in [0.9, 1] x %v", b, e.Delta, closed)
			}
		}
	})
	t.Run("custom pass level", func(t *testing.T) {
		r := handRun()
		r.Schedule = trainer.Custom.String()
		r.PassMaxStep = []float64{1, 0.5, 0.5, 0.25, 0.25}
		r.PassMinStep = r.PassMaxStep
		rep := mustAnalyze(t, r)
		if e, _ := rep.Lookup(RouteConvexSGD); !relClose(e.Delta, (1+RoundingSlack)*2*2.5, 1e-12) {
			t.Errorf("route 3 = %v, want %v", e.Delta, 5.0)
		}
	})
	t.Run("erm", func(t *testing.T) {
		for _, tc := range []struct {
			name          string
			lambda, alpha float64
			clip          float64
			passes        int
		}{
			{"ridge", 0.1, 0, 0, 60},
			{"elastic net", 0.2, 0.5, 0, 200},
			{"clipped", 0.1, 0, 0.5, 60},
			{"one pass", 0.1, 0, 0, 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := handRun()
				r.Lambda, r.L1Ratio, r.Clip = tc.lambda, tc.alpha, tc.clip
				fullBatch(r, tc.passes)
				rep := mustAnalyze(t, r)
				mu, L := tc.lambda*(1-tc.alpha), 1.0
				if tc.clip > 0 {
					L = tc.clip
				}
				eta := 1 / (0.25 + mu)
				conv := math.Pow(1-eta*mu, float64(tc.passes)) * L / mu
				want := (1 + RoundingSlack) * (2*L/(100*mu) + 2*conv)
				e, _ := rep.Lookup(RouteERM)
				if !e.Applies || !relClose(e.Delta, want, 1e-12) || !relClose(e.Beta, want, 1e-12) { // beta in the unclipped loss, L = 1
					t.Errorf("route 1 = %+v, want %v", e, want)
				}
				t7, _ := rep.Lookup(RouteTheorem7)
				if !t7.Applies || t7.Delta <= want {
					t.Errorf("theorem 7 = %+v, want applicable and looser than %v", t7, want)
				}
				if rep.Chosen == RouteTheorem7 {
					t.Errorf("theorem 7 chosen over a tighter route")
				}
				// Route 4 for b = n: (1 - (1 - eta mu)^k) 2L/(mu n), below route 1.
				e4, _ := rep.Lookup(RouteStronglyConvexSGD)
				if w4 := (1 + RoundingSlack) * (1 - math.Pow(1-eta*mu, float64(tc.passes))) * 2 * L / (100 * mu); !e4.Applies || !relClose(e4.Delta, w4, 1e-12) {
					t.Errorf("route 4 = %+v, want %v", e4, w4)
				}
				// One pass ties routes 3 and 4 (no contraction yet).
				if rep.Delta != e4.Delta || rep.Chosen == RouteERM || rep.Chosen == RouteTheorem7 {
					t.Errorf("chosen %v with %v, want the tightest, route 4's %v", rep.Chosen, rep.Delta, e4.Delta)
				}
			})
		}
	})
}

func mustAnalyze(t *testing.T, r *trainer.Run) *Report {
	t.Helper()
	rep, err := Analyze(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Routes) != len(Routes) {
		t.Fatalf("%d routes listed, want %d", len(rep.Routes), len(Routes))
	}
	return rep
}

func TestAnalyzeNotApplicable(t *testing.T) {
	all := []RouteID{RouteERM, RouteTheorem7, RouteConvexSGD, RouteStronglyConvexSGD}
	tests := []struct {
		name string
		mod  func(r *trainer.Run)
		na   []RouteID // routes that must not apply
		ok   []RouteID // routes that must apply
	}{
		{"user model", func(r *trainer.Run) { r.UserModel = true }, all, nil},
		{"non-convex", func(r *trainer.Run) { r.Convex = false }, all, nil},
		{"mu = 0", func(r *trainer.Run) {}, []RouteID{RouteERM, RouteTheorem7, RouteStronglyConvexSGD}, []RouteID{RouteConvexSGD}},
		{"step too large", func(r *trainer.Run) { r.Eta = 9; fillSteps(r) }, all, nil},
		{"step between limits", func(r *trainer.Run) {
			r.Lambda, r.BetaS, r.Eta = 1, 1, 0.9 // 2/(1+2) < 0.9 <= 2/(1+1)
			fillSteps(r)
		}, []RouteID{RouteERM, RouteTheorem7, RouteStronglyConvexSGD}, []RouteID{RouteConvexSGD}},
		{"inverse t", func(r *trainer.Run) { r.Lambda, r.Schedule = 0.1, trainer.InverseT.String(); fillSteps(r) }, all, nil},
		{"tolerance", func(r *trainer.Run) {
			r.Lambda, r.Tolerance = 0.1, 1e-3
			fullBatch(r, 50)
		}, all, nil},
		{"full batch", func(r *trainer.Run) { r.Lambda = 0.1; fullBatch(r, 50) },
			nil, all},
		{"full batch, elastic net, clipping, R >= L/mu", func(r *trainer.Run) {
			r.Lambda, r.L1Ratio, r.Clip, r.Radius = 0.2, 0.5, 0.5, 10
			fullBatch(r, 50)
		}, nil, all},
		{"full batch small radius", func(r *trainer.Run) { r.Lambda, r.Radius = 0.1, 5; fullBatch(r, 50) },
			[]RouteID{RouteERM, RouteTheorem7}, []RouteID{RouteConvexSGD, RouteStronglyConvexSGD}},
		{"full batch mu = 0", func(r *trainer.Run) { fullBatch(r, 50) },
			[]RouteID{RouteERM, RouteTheorem7, RouteStronglyConvexSGD}, []RouteID{RouteConvexSGD}},
		{"full batch, softmax clipping active", func(r *trainer.Run) { r.K, r.Clip, r.Lambda = 3, 0.5, 0.1; fullBatch(r, 50) },
			all, nil},
		{"softmax clipping active", func(r *trainer.Run) { r.K, r.Clip, r.Lambda = 3, 0.5, 0.1; fillSteps(r) },
			[]RouteID{RouteConvexSGD, RouteStronglyConvexSGD}, nil},
		{"softmax clipping inactive", func(r *trainer.Run) { r.K, r.Clip, r.Lambda = 3, 1, 0.1; fillSteps(r) },
			nil, []RouteID{RouteConvexSGD, RouteStronglyConvexSGD}},
		{"softmax clipping inactive under dropout", func(r *trainer.Run) { r.K, r.Clip, r.Dropout = 3, 0.5, 0.5 },
			nil, []RouteID{RouteConvexSGD}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := handRun()
			tc.mod(r)
			rep := mustAnalyze(t, r)
			for _, id := range tc.na {
				e, _ := rep.Lookup(id)
				var na *NotApplicableError
				if e.Applies || !errors.As(e.Err, &na) || na.Route != id || e.Reason == "" || !math.IsInf(e.Delta, 1) {
					t.Errorf("route %v: %+v, want a *NotApplicableError", id, e)
				}
				if !errors.Is(e.Err, ErrNotApplicable) {
					t.Errorf("route %v: %v does not wrap ErrNotApplicable", id, e.Err)
				}
			}
			for _, id := range tc.ok {
				if e, _ := rep.Lookup(id); !e.Applies || e.Err != nil || math.IsInf(e.Delta, 0) {
					t.Errorf("route %v: %+v, want it to apply", id, e)
				}
			}
			if len(tc.ok) == 0 && len(tc.na) == len(all) {
				if _, err := rep.Best(); !errors.Is(err, ErrNoRoute) || !errors.Is(err, ErrNotApplicable) {
					t.Errorf("Best: %v, want ErrNoRoute joined with the reasons", err)
				}
				if rep.Chosen != 0 || !math.IsInf(rep.Delta, 1) {
					t.Errorf("chosen %v with %v, want none", rep.Chosen, rep.Delta)
				}
			}
		})
	}
}

func TestAnalyzeInvalid(t *testing.T) {
	tests := []struct {
		name string
		mod  func(r *trainer.Run)
	}{
		{"batch 0", func(r *trainer.Run) { r.Batch = 0 }},
		{"batch > n", func(r *trainer.Run) { r.Batch = 101 }},
		{"mu mismatch", func(r *trainer.Run) { r.Mu = 1 }},
		{"NaN L", func(r *trainer.Run) { r.L = math.NaN() }},
		{"negative tolerance", func(r *trainer.Run) { r.Tolerance = -1 }},
		{"steps per pass", func(r *trainer.Run) { r.StepsPerPass = 7 }},
		{"pass record", func(r *trainer.Run) { r.PassMaxStep = r.PassMaxStep[:2] }},
		{"zero step", func(r *trainer.Run) { r.PassMinStep[0] = 0 }},
		{"dropout > 1", func(r *trainer.Run) { r.Dropout = 2 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := handRun()
			tc.mod(r)
			if _, err := Analyze(r); !errors.Is(err, ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
		})
	}
	if _, err := Analyze(nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("nil run: err = %v, want ErrInvalid", err)
	}
}

// TestKnobDirections checks the directions of Table 1 (doc.go): each knob is
// moved alone from a base run and the chosen beta must move as stated.
func TestKnobDirections(t *testing.T) {
	base := func() *trainer.Run {
		r := handRun()
		r.Lambda, r.Eta, r.Batch = 0.05, 0.5, 2
		return fillSteps(r)
	}
	tests := []struct {
		name string
		mod  func(r *trainer.Run)
		up   bool
	}{
		{"more passes", func(r *trainer.Run) { r.Passes = 8 }, true},
		{"larger step", func(r *trainer.Run) { r.Eta = 1 }, true},
		{"larger batch", func(r *trainer.Run) { r.Batch = 8 }, false},
		{"clipping", func(r *trainer.Run) { r.Clip = 0.5 }, false},
		{"dropout", func(r *trainer.Run) { r.Dropout = 0.6 }, false},
		{"larger lambda", func(r *trainer.Run) { r.Lambda = 0.2 }, false},
		{"averaging", func(r *trainer.Run) { r.Average = true }, false},
		{"more passes, mu = 0", func(r *trainer.Run) { r.Lambda, r.Passes = 0, 8 }, true},
	}
	b0 := mustAnalyze(t, base()).Beta
	if math.IsInf(b0, 0) {
		t.Fatal("no route for the base run")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := base()
			if tc.name == "more passes, mu = 0" {
				r.Lambda = 0
				fillSteps(r)
				b0 := mustAnalyze(t, r).Beta
				r.Passes = 8
				fillSteps(r)
				if b := mustAnalyze(t, r).Beta; !(b > b0) {
					t.Errorf("beta %v -> %v, want up", b0, b)
				}
				return
			}
			tc.mod(r)
			fillSteps(r)
			b := mustAnalyze(t, r).Beta
			if tc.up && !(b > b0) || !tc.up && !(b < b0) {
				t.Errorf("beta %v -> %v, want up = %v", b0, b, tc.up)
			}
		})
	}
	// Route 1: at a fixed l1 ratio a larger lambda lowers beta, and more
	// full-batch passes lower it (the Remark 8 term shrinks).
	erm := func(lambda float64, passes int) float64 {
		r := handRun()
		r.Lambda, r.L1Ratio = lambda, 0.5
		e, _ := mustAnalyze(t, fullBatch(r, passes)).Lookup(RouteERM)
		if !e.Applies {
			t.Fatalf("route 1 does not apply: %s", e.Reason)
		}
		return e.Beta
	}
	if a, b := erm(0.1, 100), erm(0.4, 100); !(b < a) {
		t.Errorf("elastic net: beta %v at lambda 0.1, %v at 0.4, want down", a, b)
	}
	if a, b := erm(0.1, 20), erm(0.1, 40); !(b < a) {
		t.Errorf("route 1: beta %v after 20 passes, %v after 40, want down", a, b)
	}
}

func TestRouteIDText(t *testing.T) {
	for _, id := range Routes {
		b, err := json.Marshal(id)
		if err != nil {
			t.Fatal(err)
		}
		var back RouteID
		if err := json.Unmarshal(b, &back); err != nil || back != id {
			t.Errorf("%v -> %s -> %v (%v)", id, b, back, err)
		}
	}
	var r RouteID
	if err := r.UnmarshalText([]byte("nope")); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown name: %v", err)
	}
}

// A report with routes that do not apply (Delta = +Inf) round-trips
// through JSON, with null for the non-finite values.
func TestReportJSON(t *testing.T) {
	r := handRun()
	r.Lambda = 0.1
	rep := mustAnalyze(t, fillSteps(r))
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Chosen != rep.Chosen || back.Delta != rep.Delta || len(back.Routes) != len(rep.Routes) {
		t.Fatalf("round trip: %+v, want %+v", back, rep)
	}
	for i, e := range rep.Routes {
		g := back.Routes[i]
		if g.Route != e.Route || g.Applies != e.Applies || g.Reason != e.Reason ||
			!(g.Delta == e.Delta) || math.IsNaN(e.Nominal) != math.IsNaN(g.Nominal) ||
			!math.IsNaN(e.Nominal) && g.Nominal != e.Nominal {
			t.Errorf("route %d: %+v, want %+v", i, g, e)
		}
		if !e.Applies && !errors.Is(g.Err, ErrNotApplicable) {
			t.Errorf("route %v: Err %v after the round trip", e.Route, g.Err)
		}
	}
}

// TestStronglyConvexSGDDeltaManyPasses checks that a huge pass count returns
// at once with the limit of the geometric sum, 2 eta L/b / (1 - rho).
func TestStronglyConvexSGDDeltaManyPasses(t *testing.T) {
	const L, betaS, mu, eta, n, b = 1.0, 0.25, 0.1, 0.5, 100, 1
	got, err := StronglyConvexSGDDelta(L, betaS, mu, eta, n, b, math.MaxInt)
	if err != nil {
		t.Fatal(err)
	}
	rho := math.Pow(1-eta*mu, n)
	if want := 2 * eta * L / b / (1 - rho); math.Abs(got-want) > 1e-12*want {
		t.Errorf("Delta = %v, want %v", got, want)
	}
}
