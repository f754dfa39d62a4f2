package report

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/pdp/internal/linalg"
)

// Confidential is the warning every report carries: per-instance epsilons
// are functions of the data set (Wang, Per-instance DP, Section 2: pDP is a
// property of the algorithm, the data set and the target together), so
// publishing them leaks what the private release protects.
const Confidential = "CONFIDENTIAL: per-instance DP values are computed from the data set and reveal information about it " +
	"(which rows are outliers, their leverage and residuals); they are for the data curator's eyes only and must not be published. " +
	"Only the worst-case DP epsilon of the release is a public guarantee"

// Exposed is one of the most exposed rows: the largest per-instance
// epsilons.
type Exposed struct {
	// ID identifies the row to the caller (in a Result, its data row
	// number in the input file, from 1).
	ID          int     `json:"id"`
	Epsilon     float64 `json:"epsilon"`
	Sensitivity float64 `json:"sensitivity"`
	Leverage    float64 `json:"leverage,omitempty"`
	Residual    float64 `json:"residual"`
	// Exact reports a refined (exact) sensitivity; otherwise one-step.
	Exact bool `json:"exact"`
	// Kind is the kind of the sensitivity and epsilon (pdp.Diff.Kind): exact,
	// a proven upper bound, or an estimate.
	Kind string `json:"kind"`
}

// TopExposed returns the k rows with the largest eps, largest first (ties
// by smaller id). ids[i], diffs[i] and eps[i] describe row i; the
// sensitivity listed is the upper one (pdp.Diff.Upper), the one eps is at.
func TopExposed(ids []int, diffs []pdp.Diff, eps []float64, k int) []Exposed {
	order := linalg.Top(len(eps), k, func(a, b int) bool {
		if eps[a] != eps[b] {
			return eps[a] > eps[b]
		}
		return ids[a] < ids[b]
	})
	out := make([]Exposed, len(order))
	for t, i := range order {
		lev := diffs[i].Leverage
		if math.IsNaN(lev) {
			lev = 0
		}
		sens, _, _ := diffs[i].Upper()
		out[t] = Exposed{ID: ids[i], Epsilon: eps[i], Sensitivity: sens, Leverage: lev, Residual: diffs[i].Residual, Exact: diffs[i].Exact, Kind: diffs[i].Kind()}
	}
	return out
}

// Report is the per-instance DP report of one output-perturbation release
// over the rows of a data set, against the worst-case DP epsilon of the
// same release. Its JSON form is the summary.json of the command line.
type Report struct {
	// Confidential and Neighbours are the constant statements above,
	// carried in every report.
	Confidential string `json:"confidential"`
	Neighbours   string `json:"neighbours"`
	// Rows is n; Features d; Outputs K.
	Rows     int     `json:"rows"`
	Features int     `json:"features"`
	Outputs  int     `json:"outputs"`
	Loss     string  `json:"loss"`
	Lambda   float64 `json:"lambda"`
	// Solver reports the exact ERM solution the analysis ran on.
	Objective  float64 `json:"objective"`
	GradNorm   float64 `json:"grad_norm"`
	Iterations int     `json:"newton_iterations"`
	// Mechanism, NoiseScaleName, NoiseScale and Delta describe the release.
	Mechanism      string  `json:"mechanism"`
	NoiseScaleName string  `json:"noise_scale_name"`
	NoiseScale     float64 `json:"noise_scale"`
	Delta          float64 `json:"delta"`
	// DPEpsilon is the worst-case DP epsilon of the release (replace-one
	// neighbours, at DPSensitivity); nil when no data-independent bound
	// exists (lambda = 0, or a squared loss without a label bound).
	DPEpsilon     *float64 `json:"dp_epsilon,omitempty"`
	DPSensitivity *float64 `json:"dp_sensitivity,omitempty"`
	DPNeighbours  string   `json:"dp_neighbours,omitempty"`
	// WorstCaseEpsilon is the epsilon at the remove-one worst-case
	// sensitivity (pdp.WorstCaseSensitivity): what every possible target,
	// in the data set or not, is guaranteed.
	WorstCaseEpsilon *float64 `json:"worst_case_pdp_epsilon,omitempty"`
	// PDPForAllSensitivity and PDPForAllEpsilon are the data-dependent
	// "pDP for all" of Wang's Figure 1: a bound, given this data set, on
	// the sensitivity and epsilon of every possible target added to it
	// (pdp.Analysis.AddBoundAll), beside WorstCaseEpsilon, which holds for every
	// data set; nil when there is none.
	PDPForAllSensitivity *float64 `json:"pdp_for_all_sensitivity,omitempty"`
	PDPForAllEpsilon     *float64 `json:"pdp_for_all_epsilon,omitempty"`
	// Epsilon and Sensitivity summarize the per-instance values over the
	// rows, each at its upper bound (pdp.Diff.Upper): exact values, proven upper
	// bounds, and estimates where Kinds counts any; Moments are E[eps^k],
	// k = 1..4 (Definition 7).
	Epsilon     pdp.Stats `json:"epsilon"`
	Sensitivity pdp.Stats `json:"sensitivity"`
	Moments     []float64 `json:"moments"`
	// Generalization is Wang's bound on the generalization gap from the
	// moments (pdp.GeneralizationBound), at the release's delta.
	Generalization *pdp.Generalization `json:"generalization,omitempty"`
	// Kinds counts the rows by the kind of their value (pdp.Diff.Kind).
	Kinds map[string]int `json:"kinds"`
	// Top lists the most exposed rows.
	Top []Exposed `json:"top"`
	// Exact counts the rows whose sensitivity was refined to the exact
	// value (Kinds[pdp.KindExact]).
	Exact int `json:"exact_rows"`
	// MaxRelOneStepError is the largest relative difference between the
	// one-step and the exact sensitivity over the refined rows, and
	// IdentityGap the distance to Lemma 13's integral identity of the
	// refined row it was checked on (pdp.Analysis.RefineTop).
	MaxRelOneStepError float64  `json:"max_rel_one_step_error"`
	IdentityGap        *float64 `json:"identity_gap,omitempty"`
	// ReplaceEpsilon summarizes the rows' replace-one epsilons, each an
	// upper bound over every replacement in the domain (pdp.ReplaceBound); nil
	// without a data-independent bound on an added row. ReplaceRelation
	// states how replace-one relates to remove-one, and FlipToRemove
	// summarizes over the rows how many times farther replacing the row by
	// its label-flipped copy moves the minimizer than removing it does
	// (one-step values).
	ReplaceEpsilon  *pdp.Stats `json:"replace_epsilon,omitempty"`
	ReplaceRelation string     `json:"replace_relation"`
	FlipToRemove    *pdp.Stats `json:"flip_to_remove,omitempty"`
	// OnAverageKL estimates the on-average KL-privacy of a Gaussian
	// release, training rows replaced by held-out rows (pdp.OnAverageKLFresh;
	// an estimate with its standard error, not a bound); nil for
	// Laplace and gamma and without held-out rows.
	OnAverageKL *pdp.OnAverage `json:"on_average_kl,omitempty"`
	// Targets summarizes the epsilon of targets outside the data set
	// (held-out rows, added one at a time, refined and bounded as the rows
	// are), when there are any; TargetKinds counts their kinds.
	Targets     *pdp.Stats     `json:"targets,omitempty"`
	TargetKinds map[string]int `json:"target_kinds,omitempty"`
	// Release describes the release of a model file and compares the rows
	// with its certificate; nil for a release simulated from flags.
	Release *ReleaseAnalysis `json:"release,omitempty"`
	// Notes lists what a reader must know (preprocessing, approximations).
	Notes []string `json:"notes,omitempty"`
}

// NewReport fills the parts of a report that come from the analysis: the
// solution, the release and the per-row values (ids[i], diffs[i], eps[i]
// for row i). The caller sets the DP comparison, the targets and the
// notes.
func NewReport(a *pdp.Analysis, m pdp.PrivacyLoss, lambda float64, ids []int, diffs []pdp.Diff, eps []float64, top int) (*Report, error) {
	if len(ids) != len(diffs) || len(eps) != len(diffs) {
		return nil, fmt.Errorf("%w: %d ids, %d differences, %d epsilons", pdp.ErrInput, len(ids), len(diffs), len(eps))
	}
	es, err := pdp.Summarize(eps)
	if err != nil {
		return nil, err
	}
	l2 := make([]float64, len(diffs))
	for i, d := range diffs {
		l2[i], _, _ = d.Upper()
	}
	k := kinds(diffs)
	ss, err := pdp.Summarize(l2)
	if err != nil {
		return nil, err
	}
	sol := a.Solution()
	r := &Report{
		Confidential: Confidential, Neighbours: pdp.Neighbours,
		Rows: sol.N, Features: sol.D, Outputs: sol.K, Loss: a.Loss().Name(), Lambda: lambda,
		Objective: sol.Objective, GradNorm: sol.GradNorm, Iterations: sol.Iterations,
		Mechanism: string(m.Kind), NoiseScaleName: m.Kind.ScaleName(), NoiseScale: m.Scale, Delta: m.Delta,
		Epsilon: es, Sensitivity: ss, Moments: pdp.Moments(eps, 4),
		Top: TopExposed(ids, diffs, eps, top), Exact: k[pdp.KindExact], Kinds: k,
		ReplaceRelation: ReplaceRelation,
	}
	if g, err := pdp.GeneralizationBound(eps, m.Delta); err == nil {
		r.Generalization = &g
	}
	return r, nil
}

// ReplaceRelation states how the replace-one sensitivity of a row relates
// to its remove-one sensitivity. Reports carry it.
const ReplaceRelation = "a replacement is a removal followed by an addition, so it moves the minimizer by at most the removal's distance plus the largest distance an added row can move it, L/(n lambda) for an L-Lipschitz loss; " +
	"it is not bounded by a multiple of the removal's distance: a row the fit predicts well moves the minimizer little when removed, while its label-flipped copy moves it up to about L/(n lambda) (flip_to_remove gives the measured ratios). " +
	"Each row's replace-one epsilon, bounded so, is reported beside its remove-one epsilon"

// kinds counts the differences by pdp.Diff.Kind.
func kinds(diffs []pdp.Diff) map[string]int {
	k := map[string]int{pdp.KindExact: 0, pdp.KindBound: 0, pdp.KindEstimate: 0}
	for _, d := range diffs {
		k[d.Kind()]++
	}
	return k
}
