package forecast

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// ErrTerms is wrapped by the error of Terms that relate the release to
// the caller's settings impossibly (a part of the eps outside (0, 1]).
var ErrTerms = errors.New("forecast: invalid terms")

// Forecast thresholds on the noise ratio (release.Tuner.NoiseRatio). At
// Useless or above the expected noise is at least as large as any weights
// the data can produce, so the release is expected to be near chance
// whatever the data. Weak is a heuristic: the embedded breast cancer data
// at eps = 1 (objective perturbation, ratio 0.34) stayed within 0.02 of
// the non-private accuracy, LastFM's 18 classes at eps = 1 (ratio 0.49)
// fell to the majority class (docs/RESULTS.md).
const (
	Useless = 1.0
	Weak    = 0.4
)

// Forecast is what the public constants of a release say about its
// usefulness before any row is read: the smallest noise ratio among the
// mechanisms it may use, and what would bring it below Weak.
type Forecast struct {
	// Mechanism has the smallest ratio, Ratio.
	Mechanism dp.Mechanism
	Ratio     float64
	// Advice names changes of the public settings that would bring the
	// ratio below Weak (more eps, a delta, more rows, fewer dimensions).
	Advice []string
}

// Level returns "useless", "weak" or "" for the forecast's ratio.
func (f Forecast) Level() string {
	switch {
	case f.Ratio >= Useless:
		return "useless"
	case f.Ratio >= Weak:
		return "weak"
	}
	return ""
}

// Warning returns the warning to print before training, or "" when the
// ratio is below Weak or is not a mechanism's (+Inf or NaN: no mechanism
// forecast accepts the budget).
func (f Forecast) Warning() string {
	if math.IsInf(f.Ratio, 0) || math.IsNaN(f.Ratio) || f.Mechanism == "" {
		// No mechanism forecast: nothing to say.
		return ""
	}
	var what string
	switch f.Level() {
	case "useless":
		what = "the release is expected to be near chance whatever the data: the expected noise (%s) is %.3g times the largest weights the run can produce"
	case "weak":
		what = "the release may be far less accurate than a non-private model: the expected noise (%s) is %.3g times the largest weights the run can produce"
	default:
		return ""
	}
	msg := fmt.Sprintf(what, f.Mechanism, f.Ratio)
	if len(f.Advice) > 0 {
		msg += "; what would help: " + strings.Join(f.Advice, ", ")
	}
	return msg
}

// Terms relates the release to the settings a caller gives, so that the
// forecast's advice names those settings and only feasible values of them.
// The zero Terms mean the release is the whole run: its eps is the eps
// given, and its inputs are the features and the bias.
type Terms struct {
	// EpsScale in (0, 1] is the release's part of the eps the caller
	// gives: 1 less the shares spent before the release, over the number
	// of runs a selection pays for. The advice "eps = E" names the eps to
	// give, E/EpsScale. Zero means 1.
	EpsScale float64
	// Shares are the shares of the given eps spent before the release
	// (the bounds' estimate, the principal components), by the name of
	// their setting: the advice may name a lower one that leaves the
	// release enough. Their sum is below 1.
	Shares []Share
	// Inputs names the setting that fixes the number of model inputs
	// beside the bias (the principal components' k, a projection's k),
	// as a format with one %d; the empty string means "at most %d model
	// inputs (fewer features, or a projection)" with the bias counted.
	Inputs string
	// Pure reports that the release is pure eps-DP whatever delta is
	// given (a random-stopping selection's runs): no advice of a delta.
	Pure bool
}

// Share is a share of the given eps spent before the release.
type Share struct {
	Name  string
	Value float64
}

// Predict returns the forecast for a release by the best of ms for n
// training rows of dim model inputs, with the loss and classes of cfg, at
// budget b: public values only, so it reads no rows and costs nothing.
// The ratio of each mechanism is its Tuner's NoiseRatio, which does not
// depend on lambda. It is PredictIn with the zero Terms.
func Predict(ms []release.Method, cfg trainer.Config, n, dim int, b dp.Budget) (Forecast, error) {
	return PredictIn(ms, cfg, n, dim, b, Terms{})
}

// PredictIn is Predict with the advice in the terms t of the caller's
// settings: an eps to give (never below the one given), a lower share of
// one step before the release that leaves it enough (never a share sum of
// 1 or more), and at least two model inputs (the bias and one more). When
// no mechanism of ms accepts b the ratio is +Inf, and Warning says
// nothing.
func PredictIn(ms []release.Method, cfg trainer.Config, n, dim int, b dp.Budget, t Terms) (Forecast, error) {
	best := func(n, dim int, b dp.Budget, ms []release.Method) (Forecast, error) {
		f := Forecast{Ratio: math.Inf(1)}
		for _, m := range ms {
			if m.CheckBudget(b) != nil {
				continue
			}
			t, err := release.LookupTuner(m.Name())
			if err != nil {
				return f, err
			}
			r, err := t.NoiseRatio(cfg, n, dim, b)
			if err != nil {
				return f, err
			}
			if r < f.Ratio {
				f.Mechanism, f.Ratio = m.Name(), r
			}
		}
		return f, nil
	}
	scale := t.EpsScale
	if scale == 0 {
		scale = 1
	}
	if !(scale > 0 && scale <= 1) {
		return Forecast{}, fmt.Errorf("%w: the release's part %v of the given eps, want in (0, 1]", ErrTerms, scale)
	}
	f, err := best(n, dim, b, ms)
	if err != nil || f.Ratio < Weak || math.IsInf(f.Ratio, 1) {
		return f, err
	}
	// The ratio is 2 nu/n or E||b||/(n L): exactly proportional to 1/n.
	if rows := math.Ceil(float64(n) * f.Ratio / Weak); rows < 1e15 {
		f.Advice = append(f.Advice, fmt.Sprintf("about %d training rows", int(rows)))
	} else {
		f.Advice = append(f.Advice, fmt.Sprintf("about %.3g training rows (no data set: raise eps)", rows))
	}
	helps := func(eps float64) bool {
		g, err := best(n, dim, dp.Budget{Epsilon: eps, Delta: b.Delta}, ms)
		return err == nil && g.Ratio < Weak
	}
	for eps := b.Epsilon * 2; eps <= 1e3*b.Epsilon; eps *= 2 {
		if !helps(eps) {
			continue
		}
		// The least eps that helps, to 0.1% (bisection on
		// [eps/2, eps]: the ratio falls as eps grows).
		for lo := eps / 2; eps-lo > 1e-3*eps; {
			if mid := (lo + eps) / 2; helps(mid) {
				eps = mid
			} else {
				lo = mid
			}
		}
		f.Advice = append(f.Advice, fmt.Sprintf("eps = %.3g", roundUp(eps/scale)))
		// The release's eps is proportional to 1 - total, the part the
		// shares leave: a share lowered to low leaves it eps if
		// 1 - (total - share) - low >= (1 - total) eps/b.Epsilon.
		total := 0.0
		for _, s := range t.Shares {
			total += s.Value
		}
		for _, s := range t.Shares {
			if low := roundDown(1 - (total - s.Value) - (1-total)*eps/b.Epsilon); low > 0 && low < s.Value {
				f.Advice = append(f.Advice, fmt.Sprintf("%s %.3g", s.Name, low))
			}
		}
		break
	}
	if b.Delta == 0 && !t.Pure {
		var approx []release.Method
		for _, name := range []dp.Mechanism{perturb.AMP, perturb.AnalyticGaussian} {
			if m, err := release.Lookup(name); err == nil {
				approx = append(approx, m)
			}
		}
		if g, err := best(n, dim, dp.Budget{Epsilon: b.Epsilon, Delta: 1e-5}, approx); err == nil && g.Ratio < f.Ratio {
			f.Advice = append(f.Advice, fmt.Sprintf("a delta (--delta 1e-5: %s, ratio %.3g)", g.Mechanism, g.Ratio))
		}
	}
	// At least the bias and one input.
	for d := dim / 2; d >= 2; d /= 2 {
		g, err := best(n, d, b, ms)
		if err != nil || g.Ratio >= Weak {
			continue
		}
		if t.Inputs != "" {
			f.Advice = append(f.Advice, fmt.Sprintf(t.Inputs, d-1))
		} else {
			f.Advice = append(f.Advice, fmt.Sprintf("at most %d model inputs (fewer features, or a projection)", d))
		}
		break
	}
	return f, nil
}

// roundUp rounds x > 0 up at 3 significant digits, so that the value
// printed with %.3g is at least x.
func roundUp(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x))-2)
	return math.Ceil(x/p-1e-9) * p
}

// roundDown rounds x down at 3 significant digits (0 for x <= 0).
func roundDown(x float64) float64 {
	if !(x > 0) {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(x))-2)
	return math.Floor(x/p) * p
}
