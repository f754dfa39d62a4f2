package private

import (
	"errors"
	"fmt"

	"github.com/sirupsen/logrus"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/dppca"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/perturb"
)

// planPCA checks the private principal components (Options.PCA) and
// takes their part of the budget: PCAShare of epsilon and of delta, the
// release keeping the rest. Errors wrap ErrOptions (a negative k, a share
// without components, a fit that is not private) or dp.ErrBudget (no
// delta, or a share that leaves nothing for the components or the
// release). The components are Analyze Gauss, the Gaussian mechanism:
// (eps, delta)-DP, so a pure eps budget cannot pay for them.
func (pl *Plan) planPCA() error {
	opts := pl.Options
	share := opts.PCAShare
	switch {
	case opts.PCA < 0:
		return fmt.Errorf("%w: %d principal components, want k >= 1 (0 for none)", ErrOptions, opts.PCA)
	case opts.PCA == 0 && share != 0:
		return fmt.Errorf("%w: a principal components share of %v without principal components", ErrOptions, share)
	case opts.PCA == 0:
		return nil
	case opts.Mechanism == "" && opts.Select == nil:
		return fmt.Errorf("%w: the private principal components spend a budget: they need a private fit (a mechanism or a selection)", ErrOptions)
	case opts.PrivacyID != "":
		return fmt.Errorf("%w: the private principal components are for a single fit per row, not per privacy ID", ErrOptions)
	case !(pl.Budget.Delta > 0):
		return fmt.Errorf("%w: the private principal components (Analyze Gauss) are (eps, delta)-DP: they need delta > 0", dp.ErrBudget)
	}
	if share == 0 {
		share = DefaultPCAShare
	}
	if !check.OpenUnit(share) {
		return fmt.Errorf("%w: principal components share %v: want in (0, 1), a positive part for the components and the release", dp.ErrBudget, share)
	}
	b := dp.Budget{Epsilon: share * pl.Budget.Epsilon, Delta: share * pl.Budget.Delta}
	rel := dp.Budget{Epsilon: dp.Rest(pl.Release.Epsilon, b.Epsilon), Delta: dp.Rest(pl.Release.Delta, b.Delta)}
	if !(b.Epsilon > 0 && b.Delta > 0) || !(rel.Epsilon > 0 && rel.Delta > 0) {
		return fmt.Errorf("%w: components share %v of (%v, %v) leaves (%v, %v) for them, (%v, %v) for the release (bounds' eps %v): want all > 0",
			dp.ErrBudget, share, pl.Budget.Epsilon, pl.Budget.Delta, b.Epsilon, b.Delta, rel.Epsilon, rel.Delta, pl.BoundsEpsilon)
	}
	if _, err := perturb.AnalyticGaussianSigma(b.Epsilon, b.Delta, dppca.Sensitivity); err != nil {
		return fmt.Errorf("%w: the principal components at (%v, %v): %w", dp.ErrBudget, b.Epsilon, b.Delta, err)
	}
	pl.PCABudget = b
	pl.setRelease()
	return nil
}

// checkPCA checks, before any row is read, that the private principal
// components fit the rows of w entries they apply to (the mapped
// features, or the random projection's k): 1 <= PCA <= w, and at most
// dppca.MaxEntries second moments (their time grows as the cube of the
// width: project wider rows first with a random projection, Project).
// Errors wrap ErrOptions.
func (pl *Plan) checkPCA(w int) error {
	k := pl.Options.PCA
	switch {
	case k > w:
		return fmt.Errorf("%w: %d principal components of rows of %d entries (the mapped features, or the random projection's k): want 1 <= k <= %d", ErrOptions, k, w, w)
	case w > 0 && w*(w+1)/2 > dppca.MaxEntries:
		return fmt.Errorf("%w: principal components of rows of %d entries, more than %d: project the rows first to k <= %d (--project k)", ErrOptions, w, dppca.MaxColumns, dppca.MaxColumns)
	}
	return nil
}

// components computes the private principal directions of the first n
// (training) rows of enc, mapped by prep (dppca.Components on
// prep.ComponentRows, at PCABudget with the release's noise source: the
// second private step, after the bounds' estimate and before the
// release), and sets them in prep.
func (pl *Plan) components(prep *preprocess.RowMap, enc *datasets.Encoded, n int) error {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	Z, err := prep.ComponentRows(enc, idx)
	if err != nil {
		return err
	}
	src := pl.Options.Noise
	if src == nil {
		src = perturb.Secure()
	}
	res, err := dppca.Components(Z, pl.Options.PCA, pl.PCABudget.Epsilon, pl.PCABudget.Delta, src)
	if err != nil {
		if errors.Is(err, dppca.ErrInput) {
			return fmt.Errorf("%w: %w", ErrOptions, err)
		}
		return err
	}
	if err := prep.SetComponents(res.V); err != nil {
		return err
	}
	_, w := Z.Dims()
	pl.log().WithFields(logrus.Fields{"k": pl.Options.PCA, "width": w, "eps": pl.PCABudget.Epsilon, "delta": pl.PCABudget.Delta, "sigma": res.Calibration.Scale}).Info("private: principal directions computed privately (Analyze Gauss)")
	return nil
}
