package selection

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/release/forecast"
)

// Record is what a model file publishes about the selection that chose
// its setting: the public plan (method, fractions, law of the number of
// runs, candidates, the sizes of the parts) and the chosen candidate, which
// is the selection's private output.
type Record struct {
	Method   Method    `json:"method"`
	Settings []Setting `json:"settings"`
	Chosen   int       `json:"chosen"`
	TuneFrac float64   `json:"tune_frac,omitempty"`
	ValFrac  float64   `json:"val_frac"`
	Eta      float64   `json:"eta"`
	MeanRuns float64   `json:"mean_runs"`
	// TuneRows are the rows the runs train on, ValRows the rows that
	// score them, and ReleaseRows the rows of the released fit.
	TuneRows    int `json:"tune_rows"`
	ValRows     int `json:"val_rows"`
	ReleaseRows int `json:"release_rows"`
	// Skipped reports a holdout plan that did not tune (NewPlan's public
	// rule): TuneRatio, at least forecast.Weak, is the noise ratio its runs
	// would have had, and the chosen setting is the rule's.
	Skipped   bool    `json:"skipped,omitempty"`
	TuneRatio float64 `json:"tune_ratio,omitempty"`
}

// HoldoutStep names the ledger entry of a holdout selection.
const HoldoutStep = "private selection of the setting on the tuning and validation rows (Select: the best of K runs by noisy validation accuracy, Papernot & Steinke 2022, Theorem 2), disjoint from the release rows"

// Rows labels of the ledger entries of a holdout selection: the parts are
// disjoint, so the claim is the largest part's total (parallel
// composition), not the sum of the entries.
const (
	TuningRows  = "tuning and validation rows"
	ReleaseRows = "release rows"
)

// Assumptions returns the not-covered notes a holdout selection adds to
// the release's certificate (none for random stopping, whose notes Select
// writes).
func (r *Record) Assumptions() []string {
	if r.Method != Holdout {
		return nil
	}
	if r.Skipped {
		return []string{fmt.Sprintf("the setting is the public rule's (%s), chosen without a selection: a holdout selection's runs on %g of the %d training rows would have had a noise ratio of %.3g (at least %g), too noisy to tell the candidates apart; the decision depends on public values only and costs nothing",
			r.Settings[r.Chosen], r.TuneFrac, r.ReleaseRows, r.TuneRatio, forecast.Weak)}
	}
	return []string{
		fmt.Sprintf("the setting was chosen privately (holdout selection, docs/DESIGN.md section 12) among %d candidates on %d tuning and %d validation rows, disjoint by position from the %d release rows: "+
			"by parallel composition the selection (eps, on its rows) and the release (on the release rows) together satisfy the claim; the candidates, the fractions (tuning %g, validation %g) and the law of the number of runs (eta = %g, E[K] = %g) are public",
			len(r.Settings), r.TuneRows, r.ValRows, r.ReleaseRows, r.TuneFrac, r.ValFrac, r.Eta, r.MeanRuns),
		"the floating-point sampling of the number of runs and of the candidate index of the selection lies outside the exact claim",
	}
}

// Finish adds the selection's ledger entry to the certificate of the
// released fit of a holdout selection, and labels the release's own
// entries with the rows they read: all taken from a ledger of the
// certificate's claim (parallel composition: the selection's rows and the
// release's are disjoint), the selection's own ledger, which a verifier
// rebuilds and the owner of the budget takes its charges from (package
// release's doc, "Ledgers"). An error means they do not fit in it.
func (r *Record) Finish(c *release.Certificate) error {
	if r.Method != Holdout || r.Skipped {
		return nil
	}
	l, err := dp.NewLedger(dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}, dp.Charge{Step: HoldoutStep, Mechanism: perturb.Laplace, Epsilon: c.Epsilon, Rows: TuningRows})
	if err != nil {
		return err
	}
	for _, ch := range c.Ledger {
		ch.Rows = ReleaseRows
		if _, err := l.Spend(ch); err != nil {
			return err
		}
	}
	c.Account(l)
	return nil
}

// ErrRecord is wrapped by every inconsistency Record.Check finds.
var ErrRecord = errors.New("selection: the selection record does not match its plan")

// Check recomputes the plan of a record from the public values of a fit (n
// training rows, the loss, the classes, dim inputs, the budget and the
// seed) and
// returns the chosen setting, the budget and number of rows of the
// released run, or an error wrapping ErrRecord naming what differs.
func (r *Record) Check(n int, loss losses.Loss, classes, dim int, b dp.Budget, seed uint64) (Setting, dp.Budget, int, error) {
	cfg := Config{Method: r.Method, TuneFrac: r.TuneFrac, ValFrac: r.ValFrac, Eta: r.Eta, MeanRuns: r.MeanRuns}
	pl, err := NewPlan(cfg, n, loss, classes, dim, b, seed)
	if err != nil {
		return Setting{}, dp.Budget{}, 0, fmt.Errorf("%w: %w", ErrRecord, err)
	}
	if r.Chosen < 0 || r.Chosen >= len(pl.settings) {
		return Setting{}, dp.Budget{}, 0, fmt.Errorf("%w: chosen candidate %d of %d", ErrRecord, r.Chosen, len(pl.settings))
	}
	want := pl.record(r.Chosen)
	if !reflect.DeepEqual(want, r) {
		return Setting{}, dp.Budget{}, 0, fmt.Errorf("%w: the record %+v, the plan %+v", ErrRecord, *r, *want)
	}
	rb := b
	if r.Method == RandomStopping {
		rb = dp.Budget{Epsilon: pl.runEps()}
	}
	return pl.settings[r.Chosen], rb, len(pl.rel), nil
}

// FinishSelected rewrites the certificate c of the run a random-stopping
// selection released (as its method rebuilds it at the run's budget) into
// the certificate Select writes: a verifier's counterpart of Select.
func (r *Record) FinishSelected(c *release.Certificate, b dp.Budget) error {
	if r.Method != RandomStopping {
		return nil
	}
	gamma, err := tnbGamma(r.Eta, r.MeanRuns)
	if err != nil {
		return err
	}
	return finishSelect(c, b.Epsilon, runBudget(b.Epsilon, r.Eta), r.Eta, gamma, r.MeanRuns, len(r.Settings), r.ValRows)
}
