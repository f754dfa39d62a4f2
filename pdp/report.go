package pdp

import (
	"fmt"
	"math"
	"sort"
)

// Confidential is the warning every report carries: per-instance epsilons
// are functions of the data set (Wang, Per-instance DP, Section 2: pDP is a
// property of the algorithm, the data set and the target together), so
// publishing them leaks what the private release protects.
const Confidential = "CONFIDENTIAL: per-instance DP values are computed from the data set and reveal information about it " +
	"(which rows are outliers, their leverage and residuals); they are for the data curator's eyes only and must not be published. " +
	"Only the worst-case DP epsilon of the release is a public guarantee"

// Stats summarizes a distribution of values over the rows.
type Stats struct {
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
}

// Summarize returns the mean, median, 90th and 99th percentiles (linear
// interpolation between order statistics) and maximum of v. NaN values are
// an error.
func Summarize(v []float64) (Stats, error) {
	if len(v) == 0 {
		return Stats{}, fmt.Errorf("%w: no values", ErrInput)
	}
	s := append([]float64(nil), v...)
	var sum float64
	for _, x := range s {
		if math.IsNaN(x) {
			return Stats{}, fmt.Errorf("%w: NaN value", ErrInput)
		}
		sum += x
	}
	sort.Float64s(s)
	return Stats{Mean: sum / float64(len(s)), Median: quantile(s, 0.5), P90: quantile(s, 0.9), P99: quantile(s, 0.99), Max: s[len(s)-1]}, nil
}

// quantile returns the q-quantile of sorted s by linear interpolation
// (Hyndman & Fan type 7, the default of R and NumPy).
func quantile(s []float64, q float64) float64 {
	h := q * float64(len(s)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (h-lo)*(s[i+1]-s[i])
}

// Moments returns the first k raw moments E[eps^j], j = 1..k, of eps over
// the rows: Wang's moment pDP of a data set (Per-instance DP, Definition 7,
// with the uniform distribution over the pairs (Z without z_i, z_i)); the
// parameter vector of the definition is these moments and the common delta.
func Moments(eps []float64, k int) []float64 {
	m := make([]float64, k)
	if len(eps) == 0 {
		return m
	}
	for _, e := range eps {
		p := 1.0
		for j := 0; j < k; j++ {
			p *= e
			m[j] += p
		}
	}
	for j := range m {
		m[j] /= float64(len(eps))
	}
	return m
}

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
	// Kind is the kind of the sensitivity and epsilon (Diff.Kind): exact,
	// a proven upper bound, or an estimate.
	Kind string `json:"kind"`
}

// TopExposed returns the k rows with the largest eps, largest first (ties
// by smaller id). ids[i], diffs[i] and eps[i] describe row i; the
// sensitivity listed is the upper one (Diff.Upper), the one eps is at.
func TopExposed(ids []int, diffs []Diff, eps []float64, k int) []Exposed {
	order := make([]int, len(eps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ea, eb := eps[order[a]], eps[order[b]]
		if ea != eb {
			return ea > eb
		}
		return ids[order[a]] < ids[order[b]]
	})
	k = max(0, min(k, len(order)))
	out := make([]Exposed, k)
	for t, i := range order[:k] {
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
	// sensitivity (WorstCaseSensitivity): what every possible target,
	// in the data set or not, is guaranteed.
	WorstCaseEpsilon *float64 `json:"worst_case_pdp_epsilon,omitempty"`
	// PDPForAllSensitivity and PDPForAllEpsilon are the data-dependent
	// "pDP for all" of Wang's Figure 1: a bound, given this data set, on
	// the sensitivity and epsilon of every possible target added to it
	// (Analysis.AddBoundAll), beside WorstCaseEpsilon, which holds for every
	// data set; nil when there is none.
	PDPForAllSensitivity *float64 `json:"pdp_for_all_sensitivity,omitempty"`
	PDPForAllEpsilon     *float64 `json:"pdp_for_all_epsilon,omitempty"`
	// Epsilon and Sensitivity summarize the per-instance values over the
	// rows, each at its upper bound (Diff.Upper): exact values, proven upper
	// bounds, and estimates where Kinds counts any; Moments are E[eps^k],
	// k = 1..4 (Definition 7).
	Epsilon     Stats     `json:"epsilon"`
	Sensitivity Stats     `json:"sensitivity"`
	Moments     []float64 `json:"moments"`
	// Generalization is Wang's bound on the generalization gap from the
	// moments (GeneralizationBound), at the release's delta.
	Generalization *Generalization `json:"generalization,omitempty"`
	// Kinds counts the rows by the kind of their value (Diff.Kind).
	Kinds map[string]int `json:"kinds"`
	// Top lists the most exposed rows.
	Top []Exposed `json:"top"`
	// Exact counts the rows whose sensitivity was refined to the exact
	// value (Kinds[KindExact]).
	Exact int `json:"exact_rows"`
	// MaxRelOneStepError is the largest relative difference between the
	// one-step and the exact sensitivity over the refined rows, and
	// IdentityGap the distance to Lemma 13's integral identity of the
	// refined row it was checked on (Analysis.RefineTop).
	MaxRelOneStepError float64  `json:"max_rel_one_step_error"`
	IdentityGap        *float64 `json:"identity_gap,omitempty"`
	// ReplaceEpsilon summarizes the rows' replace-one epsilons, each an
	// upper bound over every replacement in the domain (ReplaceBound); nil
	// without a data-independent bound on an added row. ReplaceRelation
	// states how replace-one relates to remove-one, and FlipToRemove
	// summarizes over the rows how many times farther replacing the row by
	// its label-flipped copy moves the minimizer than removing it does
	// (one-step values).
	ReplaceEpsilon  *Stats `json:"replace_epsilon,omitempty"`
	ReplaceRelation string `json:"replace_relation"`
	FlipToRemove    *Stats `json:"flip_to_remove,omitempty"`
	// OnAverageKL estimates the on-average KL-privacy of a Gaussian
	// release, training rows replaced by held-out rows (OnAverageKLFresh;
	// an estimate with its standard error, not a bound); nil for
	// Laplace and gamma and without held-out rows.
	OnAverageKL *OnAverage `json:"on_average_kl,omitempty"`
	// Targets summarizes the epsilon of targets outside the data set
	// (held-out rows, added one at a time, refined and bounded as the rows
	// are), when there are any; TargetKinds counts their kinds.
	Targets     *Stats         `json:"targets,omitempty"`
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
func NewReport(a *Analysis, m PrivacyLoss, lambda float64, ids []int, diffs []Diff, eps []float64, top int) (*Report, error) {
	if len(ids) != len(diffs) || len(eps) != len(diffs) {
		return nil, fmt.Errorf("%w: %d ids, %d differences, %d epsilons", ErrInput, len(ids), len(diffs), len(eps))
	}
	es, err := Summarize(eps)
	if err != nil {
		return nil, err
	}
	l2 := make([]float64, len(diffs))
	for i, d := range diffs {
		l2[i], _, _ = d.Upper()
	}
	k := kinds(diffs)
	ss, err := Summarize(l2)
	if err != nil {
		return nil, err
	}
	sol := a.Solution()
	r := &Report{
		Confidential: Confidential, Neighbours: Neighbours,
		Rows: sol.N, Features: sol.D, Outputs: sol.K, Loss: a.p.loss.Name(), Lambda: lambda,
		Objective: sol.Objective, GradNorm: sol.GradNorm, Iterations: sol.Iterations,
		Mechanism: string(m.Kind), NoiseScaleName: m.Kind.ScaleName(), NoiseScale: m.Scale, Delta: m.Delta,
		Epsilon: es, Sensitivity: ss, Moments: Moments(eps, 4),
		Top: TopExposed(ids, diffs, eps, top), Exact: k[KindExact], Kinds: k,
		ReplaceRelation: ReplaceRelation,
	}
	if g, err := GeneralizationBound(eps, m.Delta); err == nil {
		r.Generalization = &g
	}
	return r, nil
}

// ReplaceRelation states how the replace-one sensitivity of a row relates
// to its remove-one sensitivity. Reports carry it.
const ReplaceRelation = "a replacement is a removal followed by an addition, so it moves the minimizer by at most the removal's distance plus the largest distance an added row can move it, L/(n lambda) for an L-Lipschitz loss; " +
	"it is not bounded by a multiple of the removal's distance: a row the fit predicts well moves the minimizer little when removed, while its label-flipped copy moves it up to about L/(n lambda) (flip_to_remove gives the measured ratios). " +
	"Each row's replace-one epsilon, bounded so, is reported beside its remove-one epsilon"

// kinds counts the differences by Diff.Kind.
func kinds(diffs []Diff) map[string]int {
	k := map[string]int{KindExact: 0, KindBound: 0, KindEstimate: 0}
	for _, d := range diffs {
		k[d.Kind()]++
	}
	return k
}
