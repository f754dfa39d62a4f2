package private

import (
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/release/forecast"
	"github.com/stabpriv/stabpriv/selection"
)

// Forecast returns the warning of forecast.Predict for the fit of the
// table (with the other shards of a partitioned fit: shards, the table
// first) that the schema, the budget, the options and the number of
// partitions ask for, from public values only (the number of rows, the
// header, the classes, the budget and the settings): "" when the noise is
// expected to leave a useful model, or when the settings do not make a run
// (Fit, or partition.Fit, reports it). stabpriv train logs it before
// training. The advice names the command's flags (--epsilon, the shares,
// --pca or --project).
func Forecast(table *datasets.Table, shards []*datasets.Table, schema datasets.Schema, budget dp.Budget, opts Options, partitions int) string {
	partitioned := partitions > 1 || opts.PrivacyID != ""
	total := budget
	// The release's part of the budget: what the bounds estimate and the
	// principal components leave. The advice names the flags: --epsilon
	// (the release's eps over its part), the shares, --pca or --project.
	var terms forecast.Terms
	pl, planErr := NewPlan(schema, total, opts)
	estimate := planErr == nil && pl.EstimateBounds
	if planErr == nil {
		budget = pl.Release
		if pl.EstimateBounds && allCategorical(table, schema, opts) {
			// Nothing to estimate: the fit gives the bounds' part back.
			budget.Epsilon += pl.BoundsEpsilon
			pl.EstimateBounds = false
		}
		if e := total.Epsilon; e > 0 {
			if pl.EstimateBounds {
				terms.Shares = append(terms.Shares, forecast.Share{Name: "--bounds-share", Value: pl.BoundsEpsilon / e})
			}
			if opts.PCA > 0 {
				terms.Shares = append(terms.Shares, forecast.Share{Name: "--pca-share", Value: pl.PCABudget.Epsilon / e})
			}
		}
	}
	rows := table.Len()
	for _, t := range shards[min(1, len(shards)):] {
		rows += t.Len()
	}
	n := rows - int(math.Round(opts.TestFrac*float64(rows)))
	publicMap := false // every column on the public log map (BoundsFor)
	if estimate && !allCategorical(table, schema, opts) && !partitioned {
		// The bounds' step by the fit's own public rule: the ranges, the
		// centres at the share they need, or the public range for free.
		numeric := len(table.Columns) - 1
		for _, c := range schema.Categories {
			if slices.Contains(table.Columns, c.Column) {
				numeric--
			}
		}
		epsB, logScale := pl.BoundsFor(n, numeric)
		publicMap = logScale && epsB == 0
		budget.Epsilon = pl.Budget.Epsilon - epsB - pl.PCABudget.Epsilon
		terms.Shares = slices.DeleteFunc(terms.Shares, func(sh forecast.Share) bool { return sh.Name == "--bounds-share" })
		if epsB > 0 && pl.Budget.Epsilon > 0 {
			terms.Shares = append([]forecast.Share{{Name: "--bounds-share", Value: epsB / pl.Budget.Epsilon}}, terms.Shares...)
		}
	}
	// The features: the columns but the label. A text column that the fit
	// finds (privately, after this forecast) widens the rows by its hash
	// buckets, which a forecast from public values cannot know.
	w := len(table.Columns) - 1
	if id := opts.PrivacyID; id != "" {
		// Per privacy ID, n is c times the training IDs (the set of IDs
		// is public), and a user moves the weights c times as far as a
		// row: the noise ratio of n/c rows.
		ids := map[string]bool{}
		for _, t := range append([]*datasets.Table{table}, shards...) {
			for _, v := range t.LabelValues(id) {
				ids[v] = true
			}
		}
		c := opts.MaxRowsPerID
		_, train, _, err := placement.IDLayout(slices.Sorted(maps.Keys(ids)), opts.Seed, opts.TestFrac, c, max(1, partitions))
		if err != nil || c < 1 {
			return ""
		}
		n, w = train/c, w-1 // the ID column is not a feature
	}
	for _, c := range schema.Categories {
		if slices.Contains(table.Columns, c.Column) {
			w += len(c.Values) - 1
		}
	}
	dim := w + 1 // and the bias
	cfg := opts.Trainer
	cfg.Classes = len(schema.Classes)
	outputs := 1
	if cfg.Classes > 2 {
		outputs = cfg.Classes
	}
	if k := opts.PCA; k > 0 {
		dim = k + 1
		terms.Inputs = "--pca %d"
	} else if k := opts.Project; k > 0 {
		dim = k + 1
		terms.Inputs = "--project %d"
	} else if opts.ProjectAuto && budget.Epsilon > 0 {
		if k, err := preprocess.AutoProjectDim(n, w, outputs, budget.Epsilon); err == nil && k > 0 {
			dim = k + 1
		}
	}
	if cfg.Loss == nil {
		cfg.Loss = losses.Logistic{}
		if cfg.Classes > 2 {
			cfg.Loss = losses.Softmax{}
		}
	}
	var ms []release.Method
	if opts.Mechanism != "" || opts.Method != nil {
		m, err := lookupMethod(opts)
		if err != nil {
			return ""
		}
		ms = []release.Method{m}
	} else if sel := opts.Select; sel != nil && sel.Method.IsRule() {
		k := cfg.Loss.Outputs(cfg.Classes)
		mech := selection.RuleSetting(budget, cfg.Loss, k, n, dim, 1).Mechanism
		if publicMap && mech != perturb.DPSGD {
			mech = selection.ObjectiveSetting(budget, k, dim).Mechanism
		}
		switch {
		case partitioned:
			mech = selection.OutputFamily(budget) // partition.RuleMechanism
		case opts.PCA == 0 && opts.Project == 0 && cfg.Loss.Task() != losses.Regression && selection.StumpFirst(budget, k, n, w),
			opts.PCA == 0 && opts.Project == 0 && cfg.Loss.Task() != losses.Regression && publicMap && selection.StumpUseful(budget, k, n, w):
			mech = perturb.Stump // private.Plan's choice before the projection
		}
		m, err := release.Lookup(mech)
		if err != nil {
			return ""
		}
		ms = []release.Method{m}
	} else if sel := opts.Select; sel != nil {
		pl, err := selection.NewPlan(*sel, n, cfg.Loss, cfg.Classes, dim, budget, opts.Seed)
		if err != nil {
			return ""
		}
		n, budget = len(pl.ReleaseRows()), pl.ReleaseBudget()
		terms.Pure = sel.Method == selection.RandomStopping
		for _, st := range pl.Settings() {
			if m, err := release.Lookup(st.Mechanism); err == nil {
				ms = append(ms, m)
			}
		}
	}
	if total.Epsilon > 0 {
		terms.EpsScale = min(1, budget.Epsilon/total.Epsilon)
	}
	f, err := forecast.PredictIn(ms, cfg, n, dim, budget, terms)
	if err != nil {
		return ""
	}
	if opts.PrivacyID != "" {
		// n counted users: so does the advice.
		return strings.ReplaceAll(f.Warning(), " training rows", " privacy IDs (users)")
	}
	return f.Warning()
}

// allCategorical reports whether every feature column of the table (the
// columns but the label and the privacy ID) is declared categorical: a
// private fit then estimates no bounds (Plan, from the header and the
// schema, both public).
func allCategorical(table *datasets.Table, schema datasets.Schema, opts Options) bool {
	for _, c := range table.Columns {
		if c == schema.Label || c == opts.PrivacyID {
			continue
		}
		if _, ok := schema.Categorical(c); !ok {
			return false
		}
	}
	return true
}
