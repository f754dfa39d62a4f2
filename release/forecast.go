package release

import (
	"fmt"
	"math"
	"strings"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/trainer"
)

// Forecast thresholds on the noise ratio (Method.NoiseRatio). At Useless
// or above the expected noise is at least as large as any weights the data
// can produce, so the release is expected to be near chance whatever the
// data. Weak is a heuristic: the embedded breast cancer data at eps = 1
// (objective perturbation, ratio 0.34) stayed within 0.02 of the
// non-private accuracy, LastFM's 18 classes at eps = 1 (ratio 0.49) fell
// to the majority class (docs/RESULTS.md).
const (
	Useless = 1.0
	Weak    = 0.4
)

// Forecast is what the public constants of a release say about its
// usefulness before any row is read: the smallest noise ratio among the
// mechanisms it may use, and what would bring it below Weak.
type Forecast struct {
	// Mechanism has the smallest ratio, Ratio.
	Mechanism perturb.Mechanism
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
// ratio is below Weak.
func (f Forecast) Warning() string {
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

// Predict returns the forecast for a release by the best of ms for n
// training rows of dim model inputs, with the loss and classes of cfg, at
// budget b: public values only, so it reads no rows and costs nothing.
// The ratio of each mechanism is its NoiseRatio, which does not depend on
// lambda.
func Predict(ms []Method, cfg trainer.Config, n, dim int, b dp.Budget) (Forecast, error) {
	best := func(n, dim int, b dp.Budget, ms []Method) (Forecast, error) {
		f := Forecast{Ratio: math.Inf(1)}
		for _, m := range ms {
			if m.CheckBudget(b) != nil {
				continue
			}
			r, err := m.NoiseRatio(cfg, n, dim, b)
			if err != nil {
				return f, err
			}
			if r < f.Ratio {
				f.Mechanism, f.Ratio = m.Name(), r
			}
		}
		return f, nil
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
	for eps := b.Epsilon * 2; eps <= 1e3*b.Epsilon; eps *= 2 {
		g, err := best(n, dim, dp.Budget{Epsilon: eps, Delta: b.Delta}, ms)
		if err == nil && g.Ratio < Weak {
			f.Advice = append(f.Advice, fmt.Sprintf("eps = %.3g", eps))
			break
		}
	}
	if b.Delta == 0 {
		var approx []Method
		for _, name := range []perturb.Mechanism{perturb.AMP, perturb.AnalyticGaussian} {
			if m, err := Lookup(name); err == nil {
				approx = append(approx, m)
			}
		}
		if g, err := best(n, dim, dp.Budget{Epsilon: b.Epsilon, Delta: 1e-5}, approx); err == nil && g.Ratio < f.Ratio {
			f.Advice = append(f.Advice, fmt.Sprintf("a delta (--delta 1e-5: %s, ratio %.3g)", g.Mechanism, g.Ratio))
		}
	}
	for d := dim / 2; d >= 1; d /= 2 {
		g, err := best(n, d, b, ms)
		if err == nil && g.Ratio < Weak {
			f.Advice = append(f.Advice, fmt.Sprintf("at most %d model inputs (fewer features, or a projection)", d))
			break
		}
	}
	return f, nil
}
