package pdp

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/internal/check"
)

// GeneralizationAssumptions states when Generalization bounds the gap.
const GeneralizationAssumptions = "bounds the expected on-average generalization gap |E[train loss - test loss]| of any loss in [0, 1] " +
	"(the 0-1 error of the released model, for example) over data sets drawn iid, for the algorithm that keeps the regularization weight n lambda; " +
	"the means over the rows are plug-in estimates of the expectations from this one data set (with the epsilons as reported, one-step estimates for the rows not refined), not a bound that holds for it with high probability"

// Generalization is Wang's bound on the on-average generalization gap
// from the moments of pDP (Per-instance DP, Section 2.3, Proposition 9
// and Corollary 12; the same numbering in the journal version), evaluated
// on the per-instance epsilons of the rows.
type Generalization struct {
	// MeanExp2Eps and MeanExpEps are the means of e^{2 eps_i} and
	// e^{eps_i} over the rows; Delta bounds every delta(Z, z).
	MeanExp2Eps float64 `json:"mean_exp_2eps"`
	MeanExpEps  float64 `json:"mean_exp_eps"`
	Delta       float64 `json:"delta"`
	// Bound = MeanExp2Eps - 1 + Delta (1 + MeanExpEps).
	Bound float64 `json:"bound"`
	// Series are the first four terms 2^j/j! E[eps^j] of the expansion of
	// E e^{2 eps} - 1 = sum_j 2^j/j! E[eps^j] (Corollary 12), from the
	// moments of Definition 7: how the moments enter the bound.
	Series      []float64 `json:"series"`
	Assumptions string    `json:"assumptions"`
}

// GeneralizationBound returns Wang's bound on the on-average
// generalization gap given the per-instance epsilons eps of the rows of a
// data set (at a common delta):
//
//	Gen <= E[e^{2 eps}] - 1 + delta (1 + E[e^{eps}]).
//
// Derivation. Proposition 9: for a loss in [0, 1] and Z ~ D^{n-1}, z ~ D,
// the gap is at most E_Z (E_z[e^{eps(Z,z)} | Z])^2 - 1 + E delta(Z, z) +
// E_Z (E_z[e^{eps} | Z] E_z[delta | Z]), from chaining the pDP of z' and
// z” against Z (P_{Z+z'}(S) <= e^{eps'+eps”} P_{Z+z”}(S) + delta' +
// e^{eps'} delta”) and a ghost sample. Jensen's inequality gives
// (E_z[e^eps | Z])^2 <= E_z[e^{2 eps} | Z], and delta(Z, z) <= delta the
// rest. Corollary 12 simplifies further to E e^{2 eps} - 1 + 2 delta, which
// needs E e^{eps} <= 1, true only at eps = 0 (its hypothesis
// E[e^{2 eps}] <= 1 is likewise a misprint), so the form here keeps
// delta (1 + E e^{eps}); and the last line of Proposition 9's proof writes
// eps(Z, z') delta(Z, z”) where the chaining gives e^{eps(Z, z')}
// delta(Z, z”) (the statement of the proposition has the latter).
//
// The remove-one epsilon of row i is eps(Z_{-i}, z_i), and (Z_{-i}, z_i) is
// distributed as D^{n-1} x D when Z ~ D^n, so the means over the rows are
// unbiased estimates of the expectations (GeneralizationAssumptions). NaN,
// negative or infinite epsilons and delta outside [0, 1) are errors.
func GeneralizationBound(eps []float64, delta float64) (Generalization, error) {
	if len(eps) == 0 {
		return Generalization{}, fmt.Errorf("%w: no epsilons", ErrInput)
	}
	if !check.HalfOpenUnit(delta) {
		return Generalization{}, fmt.Errorf("%w: delta = %v, want in [0, 1)", ErrInput, delta)
	}
	g := Generalization{Delta: delta, Assumptions: GeneralizationAssumptions}
	for _, e := range eps {
		if !check.NonNegative(e) {
			return Generalization{}, fmt.Errorf("%w: epsilon %v, want finite >= 0", ErrInput, e)
		}
		g.MeanExp2Eps += math.Exp(2 * e)
		g.MeanExpEps += math.Exp(e)
	}
	n := float64(len(eps))
	g.MeanExp2Eps /= n
	g.MeanExpEps /= n
	g.Bound = g.MeanExp2Eps - 1 + delta*(1+g.MeanExpEps)
	c := 1.0
	for j, m := range Moments(eps, 4) {
		c *= 2 / float64(j+1)
		g.Series = append(g.Series, c*m)
	}
	return g, nil
}
