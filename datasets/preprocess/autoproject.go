package preprocess

import (
	"fmt"
	"math"
)

// AutoProjectC is the constant c of AutoProjectDim's rule, fitted on public
// benchmark data (bench/defaults, task project; docs/RESULTS.md, the
// automatic projection): the default release's test accuracy over a grid of
// k on gene_all, on a wide synthetic planted model, on the first rows of
// raw Adult and on LastFM; each budget's best k implies a c, and
// AutoProjectC is their geometric mean (to two digits) over the budgets
// whose best k projects and is above the majority class by more than two
// standard errors (elsewhere every k is within noise of it: gene_all, small
// Adult). The fit is thin: those budgets are the wide synthetic set's three
// (alone they give about 0.66) and two of LastFM's, whose width is below
// its rows (the rule leaves it unprojected), and the grid of k is in
// powers of two, so each point is known to a factor of 2. The same
// constant serves every user's data.
const AutoProjectC = 0.55

// AutoProjectMin is the smallest k the rule returns.
const AutoProjectMin = 2

// AutoProjectDim returns the number of dimensions k of the automatic
// random projection (Projection) for n training rows of w mapped features,
// a model of outputs outputs (1 for a scalar loss, K for softmax) and a
// release at eps: 0 (no projection) when w <= n, else
//
//	k = max(AutoProjectMin, ceil(c (n eps / outputs)^(2/3))), 0 if k >= w,
//
// with c = AutoProjectC. It reads no row: n, w, the classes and eps are
// public, so the choice costs no privacy.
//
// Derivation (a heuristic balance, not a theorem). The release's noise
// grows with the number of model inputs: for objective perturbation and
// the gamma-norm mechanism the expected noise norm is proportional to
// outputs k / eps, and its cost in the risk of a comparator of bounded norm
// to outputs k / (n eps) (Chaudhuri, Monteleoni & Sarwate 2011, Sections 4
// and 5). A Gaussian random projection to k dimensions preserves inner
// products up to a distortion of order 1/sqrt(k) (Johnson & Lindenstrauss;
// Achlioptas 2003), the cost of projecting a comparator's margins. The sum
// A outputs k/(n eps) + B/sqrt(k) is smallest at k proportional to
// (n eps / outputs)^(2/3); c sets the proportion. When w <= n the data are
// not wide and the rule leaves them as they are.
func AutoProjectDim(n, w, outputs int, eps float64) (int, error) {
	if n < 1 || w < 1 || outputs < 1 || !(eps > 0) || math.IsInf(eps, 1) {
		return 0, fmt.Errorf("automatic projection for n = %d, w = %d, outputs = %d, eps = %v: want positive values", n, w, outputs, eps)
	}
	if w <= n {
		return 0, nil
	}
	k := int(math.Ceil(AutoProjectC * math.Pow(float64(n)*eps/float64(outputs), 2.0/3)))
	k = max(k, AutoProjectMin)
	if k >= w {
		return 0, nil
	}
	return k, nil
}

// Width returns the number of mapped features before any projection: the
// numeric features and the indicators of the categorical ones.
func (p *RowMap) Width() int { return p.width() }
