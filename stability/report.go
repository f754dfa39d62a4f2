package stability

import (
	"errors"
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/trainer"
)

// Neighbours names the neighbouring relation of every bound in this package.
const Neighbours = "replace-one (same n); both runs share the seed, hence the permutation of every pass and every dropout mask"

// Effective holds the constants that enter the SGD routes after the knobs.
type Effective struct {
	// L bounds the norm of every per-example gradient used in a step:
	// min(G, s*L) with clipping to G and s-dropout (s = 1, no dropout; no G,
	// no clipping).
	L float64 `json:"lipschitz"`
	// BetaS bounds the smoothness of every per-example loss used in a step,
	// s^2 * BetaS: the masked loss l(<w, Mx>, y) has curvature
	// S_z ||Mx||^2 <= S_z s^2 kappa^2, and clipping l' does not raise it.
	BetaS float64 `json:"smoothness"`
	// Mu is the strong convexity lambda*(1-alpha) of the objective.
	Mu float64 `json:"mu"`
	// LossL is the Lipschitz constant L = Lz*Kappa of the loss that uniform
	// stability is measured in (the user's loss, neither clipped nor
	// masked): beta = LossL * Delta.
	LossL float64 `json:"loss_lipschitz"`
}

// Route is one route's entry in a Report.
type Route struct {
	Route RouteID `json:"route"`
	// Applies reports whether every condition of the route holds.
	Applies bool `json:"applies"`
	// Delta is the L2 sensitivity bound of the released weights (Frobenius
	// norm for K > 1) and Beta = L*Delta the uniform stability bound in the
	// loss; both are +Inf when the route does not apply.
	Delta float64 `json:"delta"`
	Beta  float64 `json:"beta"`
	// Nominal is the value the formula would give if its failed conditions
	// were ignored, for comparison only; NaN when it cannot be evaluated.
	Nominal float64 `json:"nominal"`
	// Formula states the bound with the constants it used.
	Formula string `json:"formula"`
	// Citation names the result the route rests on.
	Citation string `json:"citation"`
	// Reason says why the route does not apply; Err is the typed error
	// (a *NotApplicableError), nil when the route applies.
	Reason string `json:"reason,omitempty"`
	Err    error  `json:"-"`
}

// Report lists every route for one run and the tightest that applies.
type Report struct {
	// Routes holds one entry per route, in the order of Routes.
	Routes []Route `json:"routes"`
	// Chosen is the tightest applicable route, 0 when none applies.
	Chosen RouteID `json:"chosen,omitempty"`
	// Delta and Beta are those of the chosen route (+Inf when none applies).
	Delta float64 `json:"delta"`
	Beta  float64 `json:"beta"`
	// Effective holds the constants after the knobs.
	Effective Effective `json:"effective"`
	// Neighbours is the neighbouring relation of the bounds.
	Neighbours string `json:"neighbours"`
	// Assumptions lists what the bounds take for granted and a certificate
	// must repeat.
	Assumptions []string `json:"assumptions"`
}

// Best returns the chosen route, or an error wrapping ErrNoRoute (joined with
// every route's reason) when none applies.
func (r *Report) Best() (Route, error) {
	if r.Chosen == 0 {
		errs := []error{ErrNoRoute}
		for _, e := range r.Routes {
			errs = append(errs, e.Err)
		}
		return Route{}, errors.Join(errs...)
	}
	for _, e := range r.Routes {
		if e.Route == r.Chosen {
			return e, nil
		}
	}
	return Route{}, ErrNoRoute
}

// Lookup returns the entry of route id.
func (r *Report) Lookup(id RouteID) (Route, bool) {
	for _, e := range r.Routes {
		if e.Route == id {
			return e, true
		}
	}
	return Route{}, false
}

// Analyze computes, from the Run record of a training run, the L2
// sensitivity Delta of the returned weights and the uniform stability beta by
// every route of docs/DESIGN.md (section 3), and chooses the tightest route that applies. A
// route that does not apply is listed with its reason (a *NotApplicableError)
// and Delta = +Inf. The neighbouring relation is replace-one with a shared
// seed (see Neighbours).
//
// A run on a user-supplied graph model or a non-convex loss is outside every
// route. Analyze returns an error wrapping ErrInvalid only for a nil or
// inconsistent record; when no route applies it returns the report with
func Analyze(run *trainer.Run) (*Report, error) {
	c, err := checkRun(run)
	if err != nil {
		return nil, err
	}
	rep := &Report{
		Effective:  c.eff,
		Neighbours: Neighbours,
		Delta:      math.Inf(1),
		Beta:       math.Inf(1),
		Assumptions: []string{
			"rows are clipped to ||x|| <= kappa by a per-row map; a bias feature counts in kappa",
			"beta = L*Delta is uniform stability in the unclipped, unmasked loss with L = Lz*kappa",
		},
		Routes: make([]Route, 0, len(routeTable)),
	}
	for i := range routeTable {
		rep.Routes = append(rep.Routes, routeTable[i].evaluate(c))
	}
	for _, e := range rep.Routes {
		if e.Applies && e.Delta < rep.Delta {
			rep.Chosen, rep.Delta, rep.Beta = e.Route, e.Delta, e.Beta
		}
	}
	if d := routeOf(rep.Chosen); d != nil {
		rep.Assumptions = append(rep.Assumptions, d.Assumptions...)
		rep.Assumptions = append(rep.Assumptions,
			fmt.Sprintf("the bound is the exact-arithmetic value times (1 + %g), an allowance for float64 rounding", RoundingSlack))
	}
	return rep, nil
}

// checked holds a validated run and its effective constants.
type checked struct {
	run *trainer.Run
	eff Effective
	s   float64 // dropout fraction
	m   int     // steps per pass
	// clipErr is non-nil when clipping may be active on a K > 1 loss.
	clipErr string
	// rec caches the growth recursions of routes 3 and 4 (recursion).
	rec *[2][2]float64
}

func checkRun(run *trainer.Run) (*checked, error) {
	if run == nil {
		return nil, invalid("nil run")
	}
	if err := checkNonNeg([]string{"kappa", "L", "smoothness", "lambda", "l1 ratio", "mu", "clip", "dropout", "radius", "tolerance", "eta"},
		run.Kappa, run.L, run.BetaS, run.Lambda, run.L1Ratio, run.Mu, run.Clip, run.Dropout, run.Radius, run.Tolerance, run.Eta); err != nil {
		return nil, err
	}
	if run.N < 1 || run.D < 1 || run.K < 1 {
		return nil, invalid("n = %d, d = %d, k = %d, want >= 1", run.N, run.D, run.K)
	}
	if run.Batch < 1 || run.Batch > run.N {
		return nil, invalid("batch = %d, want 1 <= b <= n = %d", run.Batch, run.N)
	}
	if run.Dropout > 1 || run.L1Ratio > 1 {
		return nil, invalid("dropout = %v, l1 ratio = %v, want <= 1", run.Dropout, run.L1Ratio)
	}
	if want := run.Lambda * (1 - run.L1Ratio); math.Abs(run.Mu-want) > 1e-12*math.Max(1, want) {
		return nil, invalid("mu = %v, but lambda*(1-l1 ratio) = %v", run.Mu, want)
	}
	m := (run.N + run.Batch - 1) / run.Batch
	if run.StepsPerPass != 0 && run.StepsPerPass != m {
		return nil, invalid("steps per pass = %d, but ceil(n/b) = %d", run.StepsPerPass, m)
	}
	// The step records are constants of the run (the schedule fixes them);
	// the analysis never reads the statistics of the data (Run.Stats).
	if done := len(run.PassMaxStep); done > run.Passes && run.Passes > 0 || run.PassMinStep != nil && len(run.PassMinStep) != done {
		return nil, invalid("%d passes asked for, but %d max and %d min steps recorded", run.Passes, done, len(run.PassMinStep))
	}
	for j := range run.PassMaxStep {
		hi := run.PassMaxStep[j]
		lo := hi
		if run.PassMinStep != nil {
			lo = run.PassMinStep[j]
		}
		if !check.Finite(hi) || !check.Positive(lo) || lo > hi {
			return nil, invalid("pass %d steps in [%v, %v], want 0 < min <= max finite", j, lo, hi)
		}
	}
	s := run.Dropout
	if s == 0 {
		s = 1 // zero means no dropout, as in trainer.Config
	}
	c := &checked{run: run, s: s, m: m}
	c.eff = Effective{L: s * run.L, BetaS: s * s * run.BetaS, Mu: run.Mu, LossL: run.L}
	if run.Clip > 0 && run.Clip < c.eff.L {
		if run.K == 1 {
			c.eff.L = run.Clip
		} else {
			c.clipErr = "per-example clipping of a K > 1 loss may be active (G < s*L): a clipped multiclass step is not known to be non-expansive"
		}
	}
	return c, nil
}

// outside returns a reason when the run is outside every route.
func (c *checked) outside() string {
	switch {
	case c.run.UserModel:
		return "a user-supplied graph model: its loss constants and convexity are unknown"
	case !c.run.Convex:
		return "the loss is not convex"
	}
	return ""
}

func (c *checked) fail(e *Route, err error) Route {
	e.Applies, e.Delta, e.Beta, e.Err = false, math.Inf(1), math.Inf(1), err
	var na *NotApplicableError
	if errors.As(err, &na) {
		e.Reason = na.Reason
	} else if err != nil {
		e.Reason = err.Error()
	}
	return *e
}

func (c *checked) ok(e *Route, delta float64) Route {
	// Near the bottom of the float64 range rounding is absolute, not
	// relative (subnormal numbers), and the relative slack no longer covers
	// it: a bound or an effective Lipschitz constant that small is refused.
	if delta < MinScale || c.eff.L < MinScale {
		return c.fail(e, notApplicable(e.Route, "Delta = %.3g or the effective Lipschitz constant %.3g is below %.3g, where float64 rounding exceeds the relative rounding slack; raise the clipping norm or lambda's ratio to it", delta, c.eff.L, MinScale))
	}
	e.Applies, e.Delta, e.Beta, e.Nominal = true, delta, c.eff.LossL*delta, delta
	return *e
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
