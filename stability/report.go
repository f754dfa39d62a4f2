package stability

import (
	"errors"
	"fmt"
	"math"

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
// Chosen = 0, and Report.Best says why.
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
	}
	rep.Routes = []Route{c.erm(), c.theorem7(), c.convexSGD(), c.stronglyConvexSGD()}
	for _, e := range rep.Routes {
		if e.Applies && e.Delta < rep.Delta {
			rep.Chosen, rep.Delta, rep.Beta = e.Route, e.Delta, e.Beta
		}
	}
	switch rep.Chosen {
	case RouteERM, RouteTheorem7:
		rep.Assumptions = append(rep.Assumptions,
			"Remark 8: the weights are the last iterate of a number of full-batch proximal gradient passes fixed in advance, whose distance to the minimizer is bounded from the settings alone ((1 - eta mu)^k L/mu); the release does not depend on whether the run converged",
			fmt.Sprintf("the bound is the exact-arithmetic value times (1 + %g), an allowance for float64 rounding", RoundingSlack))
	case RouteConvexSGD, RouteStronglyConvexSGD:
		rep.Assumptions = append(rep.Assumptions,
			"the number of steps is fixed in advance and neighbouring runs share the permutations and dropout masks (same seed)",
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
		return nil, invalid("%d passes asked for, but %d max and %d min steps recorded", run.Passes, done, len(run.PassMaxStep))
	}
	for j := range run.PassMaxStep {
		hi := run.PassMaxStep[j]
		lo := hi
		if run.PassMinStep != nil {
			lo = run.PassMinStep[j]
		}
		if math.IsNaN(hi) || math.IsInf(hi, 0) || math.IsNaN(lo) || lo <= 0 || lo > hi {
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

func entry(id RouteID, citation string) Route {
	return Route{Route: id, Citation: citation, Delta: math.Inf(1), Beta: math.Inf(1), Nominal: math.NaN()}
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

// ermConditions checks what routes 1 and 2 share: the run is full-batch
// proximal gradient descent with a constant step, a fixed number of passes
// and the last iterate returned, so that ProxGDConvergence bounds its
// distance to the minimizer of the (clipped) objective on every data set.
// Every reason names settings only.
func (c *checked) ermConditions(id RouteID) error {
	r := c.run
	if why := c.outside(); why != "" {
		return notApplicable(id, "%s", why)
	}
	if r.Mu == 0 {
		return notApplicable(id, "mu = lambda*(1-l1 ratio) = 0: the objective is not strongly convex")
	}
	if r.Tolerance > 0 {
		return notApplicable(id, "a tolerance (%.3g) stops training at a data-dependent pass: no route certifies such a run; fix the passes in advance (ProxGDPasses) and set no tolerance", r.Tolerance)
	}
	if r.Batch != r.N {
		return notApplicable(id, "minibatch %d < n = %d: the distance to the minimizer is bounded for full-batch passes (b = n) only", r.Batch, r.N)
	}
	if r.Schedule != trainer.Constant.String() {
		return notApplicable(id, "schedule %s: the convergence bound needs a constant step", r.Schedule)
	}
	if r.Average {
		return notApplicable(id, "iterate averaging: the convergence bound covers the last iterate only")
	}
	if c.s < 1 {
		return notApplicable(id, "s-dropout (s = %g) draws new masks every pass: the passes do not iterate one map with a fixed minimizer", c.s)
	}
	if c.clipErr != "" {
		return notApplicable(id, "%s", c.clipErr)
	}
	if r.Passes < 1 || len(r.PassMaxStep) != r.Passes {
		return notApplicable(id, "%d passes asked for, %d recorded: the run must do a fixed number of passes", r.Passes, len(r.PassMaxStep))
	}
	limit := 1 / (c.eff.BetaS + r.Mu)
	for j, hi := range r.PassMaxStep {
		if !near(hi, r.Eta) {
			return notApplicable(id, "step %.6g in pass %d differs from the constant step %.6g", hi, j, r.Eta)
		}
	}
	if r.Eta <= 0 || r.Eta > limit*(1+1e-12) {
		return notApplicable(id, "step %.6g exceeds 1/(beta_s + mu) = %.6g: the contraction bound needs a smaller step", r.Eta, limit)
	}
	if r.Radius > 0 && r.Radius < r.L/r.Mu {
		return notApplicable(id, "projection radius %.4g < L/mu = %.4g: the unconstrained minimizer of a neighbour may lie outside the ball where the loss constants hold", r.Radius, r.L/r.Mu)
	}
	return nil
}

const (
	citeERM = "Chaudhuri, Monteleoni & Sarwate 2011 (Corollary 8); Bousquet & Elisseeff 2002; Remark 8 of Watson, Rozemberczki & Sarkar"
	citeT7  = "Watson, Rozemberczki & Sarkar, Theorem 7 and Remark 8"
	citeSGD = "Wu et al. 2017, Bolt-on Differential Privacy; Hardt, Recht & Singer 2016, growth recursion"
)

// deltaConv returns delta_conv(k) = (1 - eta mu)^k L_eff/mu for the run's
// settings, and whether it can be evaluated (mu > 0, a constant step with
// 0 <= 1 - eta mu < 1, k >= 1). L_eff = min(G, L) with clipping (K = 1):
// the full-batch passes minimize the clipped objective.
func (c *checked) deltaConv() (float64, bool) {
	r := c.run
	if r.Mu <= 0 || r.Schedule != trainer.Constant.String() || r.Passes < 1 {
		return 0, false
	}
	if q := 1 - r.Eta*r.Mu; r.Eta <= 0 || q < 0 || q >= 1 {
		return 0, false
	}
	return proxGDConv(c.eff.L, r.Mu, r.Eta, r.Passes), true
}

// erm is route 1 with the Remark 8 term of full-batch proximal gradient
// descent: (1 + RoundingSlack) (2 L_eff/(n mu) + 2 delta_conv(k)). L_eff =
// min(G, L) is the Lipschitz constant of the (clipped) loss whose objective
// the passes minimize. Only settings enter: the report is the same for every
// data set, and so is the decision to release.
func (c *checked) erm() Route {
	e := entry(RouteERM, citeERM)
	r := c.run
	e.Formula = "(1 + slack) (2L/(n mu) + 2 delta_conv(k)), delta_conv(k) = (1 - eta mu)^k L/mu, L = min(G, L); full-batch prox-GD, k fixed passes"
	if dc, ok := c.deltaConv(); ok {
		if d, err := ERMDelta(c.eff.L, r.Mu, r.N); err == nil {
			if d2, err := Remark8Delta(d, dc); err == nil {
				e.Nominal = (1 + RoundingSlack) * d2
			}
		}
	}
	nominal := e.Nominal
	if err := c.ermConditions(RouteERM); err != nil {
		return c.fail(&e, err)
	}
	return c.ok(&e, nominal)
}

// theorem7 is route 2 fed with the stability of the exact minimizer in the
// regularized loss l + R: beta = (L + L_R) * 2L/(n mu), where L_R = L +
// lambda*alpha*sqrt(K d) is the Lipschitz constant of R on the ball
// ||w|| <= L/mu that holds every minimizer (L = L_eff, the loss whose
// objective the passes minimize), plus the Remark 8 term of route 1. It is
// always looser than route 1 (Theorem7Delta), so it is listed, never chosen
// over it.
func (c *checked) theorem7() Route {
	e := entry(RouteTheorem7, citeT7)
	r := c.run
	e.Formula = "(1 + slack) (sqrt(2 beta_{l+R}/mu) + 2 delta_conv(k)), beta_{l+R} = (2L + lambda alpha sqrt(Kd)) 2L/(n mu), L = min(G, L)"
	if dc, ok := c.deltaConv(); ok {
		L := c.eff.L
		if d, err := ERMDelta(L, r.Mu, r.N); err == nil {
			lr := L + r.Lambda*r.L1Ratio*math.Sqrt(float64(r.K*r.D))
			if t, err := Theorem7Delta((L+lr)*d, r.Mu); err == nil {
				if t2, err := Remark8Delta(t, dc); err == nil {
					e.Nominal = (1 + RoundingSlack) * t2
				}
			}
		}
	}
	nominal := e.Nominal
	if err := c.ermConditions(RouteTheorem7); err != nil {
		return c.fail(&e, err)
	}
	return c.ok(&e, nominal)
}

// sgdConditions checks what routes 3 and 4 share.
func (c *checked) sgdConditions(id RouteID) error {
	r := c.run
	if why := c.outside(); why != "" {
		return notApplicable(id, "%s", why)
	}
	if c.clipErr != "" {
		return notApplicable(id, "%s", c.clipErr)
	}
	if r.Tolerance > 0 {
		return notApplicable(id, "a tolerance (%.3g) stops training at a data-dependent pass: the growth recursion couples runs of the same length only", r.Tolerance)
	}
	if len(r.PassMaxStep) < 1 {
		return notApplicable(id, "no pass was run")
	}
	return nil
}

// schedule returns an upper bound on eta_t, and the smallest eta_t, of step
// t >= 1: exact when the schedule can be recomputed from the record and
// agrees with it, else the largest and smallest step of t's pass.
func (c *checked) schedule() func(t int) (hi, lo float64) {
	r := c.run
	var f func(t int) float64
	switch r.Schedule {
	case trainer.Constant.String():
		f = func(int) float64 { return r.Eta }
	case trainer.InverseT.String():
		if r.Mu > 0 {
			f = func(t int) float64 { return 1 / (r.Mu * float64(t)) }
		}
	case trainer.BoundedInverseT.String():
		if r.Mu > 0 {
			beta := r.BetaS + r.Mu
			f = func(t int) float64 { return math.Min(1/beta, 1/(r.Mu*float64(t))) }
		}
	}
	passLevel := func(t int) (float64, float64) {
		j := (t - 1) / c.m
		lo := r.PassMaxStep[j]
		if r.PassMinStep != nil {
			lo = r.PassMinStep[j]
		} else if r.Mu > 0 {
			lo = 0 // unknown: no contraction may be assumed
		}
		return r.PassMaxStep[j], lo
	}
	if f == nil {
		return passLevel
	}
	// The recomputed steps must match the record (same max and min per pass).
	for j := 0; j < len(r.PassMaxStep); j++ {
		hi, lo := f(j*c.m+1), f((j+1)*c.m)
		if !near(hi, r.PassMaxStep[j]) || r.PassMinStep != nil && !near(lo, r.PassMinStep[j]) {
			return passLevel
		}
	}
	return func(t int) (float64, float64) { v := f(t); return v, v }
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// recursion runs the growth recursion of the SGD routes over the T =
// passes*m steps, in units of 2L/b, for the last iterate and for the average
// of the iterates w_1..w_T. strong selects the contraction rho_s = 1 - eta_s
// mu of route 4; route 3 uses rho_s = 1.
//
// If the differing example sits at step u_j of pass j, the distance after
// step t is at most sum_{j: u_j <= t} eta_{u_j} prod_{s=u_j+1}^{t} rho_s
// (each step contracts the distance by rho_s and the step using the example
// adds 2 eta L/b). For the last iterate the worst position is chosen per pass:
//
//	last = sum_j max_{u in pass j} eta_u P(u),  P(u) = prod_{s=u+1}^{T} rho_s.
//
// The average's distance is at most the average of the per-step distances of
// the same permutation (triangle inequality), and summing over t first,
//
//	mean = (1/T) sum_j max_{u in pass j} eta_u G(u),  G(u) = sum_{t=u}^{T} prod_{s=u+1}^{t} rho_s,
//
// again with the worst position per pass. Both are computed backwards from
// P(T) = G(T) = 1, P(u) = rho_{u+1} P(u+1), G(u) = 1 + rho_{u+1} G(u+1).
func (c *checked) recursion(strong bool) (last, mean float64) {
	r := c.run
	eta := c.schedule()
	T := len(r.PassMaxStep) * c.m
	P, G := 1.0, 1.0
	var bestP, bestG float64
	for u := T; u >= 1; u-- {
		if u < T {
			_, lo := eta(u + 1)
			rho := 1.0
			if strong {
				rho = 1 - lo*r.Mu
			}
			P *= rho
			G = 1 + rho*G
		}
		hi, _ := eta(u)
		bestP = math.Max(bestP, hi*P)
		bestG = math.Max(bestG, hi*G)
		if (u-1)%c.m == 0 { // first step of a pass: close it
			last += bestP
			mean += bestG
			bestP, bestG = 0, 0
		}
	}
	return last, mean / float64(T)
}

// sgd evaluates route 3 or 4 from the recursion, after the shared checks
// and the step-size condition limit, times 1 + RoundingSlack.
func (c *checked) sgd(e *Route, strong bool, limit float64, cond string) Route {
	r := c.run
	unit := 2 * c.eff.L / float64(r.Batch)
	// With a tolerance the pass records are statistics of the data (it
	// chose when to stop) and the route does not apply: no nominal value
	// is computed from them, so that a report does not publish them.
	if r.Tolerance == 0 && len(r.PassMaxStep) >= 1 && len(r.PassMaxStep) == len(r.PassMaxStep) {
		last, mean := c.recursion(strong)
		if r.Average {
			e.Nominal = (1 + RoundingSlack) * unit * mean
		} else {
			e.Nominal = (1 + RoundingSlack) * unit * last
		}
	}
	nominal := e.Nominal
	if err := c.sgdConditions(e.Route); err != nil {
		return c.fail(e, err)
	}
	for j, hi := range r.PassMaxStep {
		if hi > limit*(1+1e-12) {
			return c.fail(e, notApplicable(e.Route, "step %.6g in pass %d exceeds %s = %.6g", hi, j, cond, limit))
		}
	}
	return c.ok(e, nominal)
}

// convexSGD is route 3: (2L/b) sum_j eta_{t_j} (the average of the per-step
// bounds when Average is set), every step <= 2/(beta_s + mu).
func (c *checked) convexSGD() Route {
	e := entry(RouteConvexSGD, citeSGD)
	e.Formula = "(2L/b) sum over passes of the step using the differing example; steps <= 2/(beta_s + mu)"
	if c.run.Average {
		e.Formula += "; averaged iterates: mean over steps of the per-step bounds"
	}
	return c.sgd(&e, false, 2/(c.eff.BetaS+c.eff.Mu), "2/(beta_s + mu)")
}

// stronglyConvexSGD is route 4: the recursion with contraction (1 - eta_t mu)
// per step, every step <= 2/(beta_s + 2 mu). For a constant step it equals
// StronglyConvexSGDDelta, for BoundedInverseT it is at most
// DecreasingStepDelta.
func (c *checked) stronglyConvexSGD() Route {
	e := entry(RouteStronglyConvexSGD, citeSGD)
	e.Formula = "(2L/b) sum_j eta_{t_j} prod_{s > t_j} (1 - eta_s mu); steps <= 2/(beta_s + 2 mu)"
	if c.run.Average {
		e.Formula += "; averaged iterates: mean over steps of the per-step bounds"
	}
	if c.run.Mu == 0 {
		if err := c.sgdConditions(e.Route); err != nil {
			return c.fail(&e, err)
		}
		return c.fail(&e, notApplicable(e.Route, "mu = lambda*(1-l1 ratio) = 0: the steps do not contract"))
	}
	return c.sgd(&e, true, 2/(c.eff.BetaS+2*c.eff.Mu), "2/(beta_s + 2 mu)")
}
