package selection

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// ErrSelect is wrapped by every error about the settings of a private
// selection.
var ErrSelect = errors.New("selection: invalid selection")

// Candidate is one choice of a private selection: a release that Select
// prepares at the budget of one run (RunBudget) on the training part of a
// ValidationSplit only, with a pure mechanism. Each run of the selection
// releases a fresh copy of it: new noise for the same trained weights
// (output perturbation), or the objective minimized afresh with new noise
// (objective perturbation). FromTrained and FromRows make candidates.
type Candidate struct {
	// Name describes the setting (for the certificate and the caller).
	Name string
	// Prepare prepares the candidate's release at budget b.
	Prepare func(ctx context.Context, b dp.Budget) (release.Prepared, error)
}

// FromTrained returns the candidate that releases the weights tr holds by
// the output-perturbation mechanism mech (release.Trained.Prepared). The
// weights are trained once for every selection that uses them.
func FromTrained(name string, tr *release.Trained, mech dp.Mechanism) Candidate {
	return Candidate{Name: name, Prepare: func(_ context.Context, b dp.Budget) (release.Prepared, error) {
		return tr.Prepared(mech, b)
	}}
}

// FromRows returns the candidate that the release method of mech prepares
// on rows at each selection (release.Method.Prepare): for objective
// perturbation, a calibration at the run's budget whose every run minimizes
// afresh; for output perturbation, a training run.
func FromRows(name string, mech dp.Mechanism, rows release.Rows) Candidate {
	return Candidate{Name: name, Prepare: func(ctx context.Context, b dp.Budget) (release.Prepared, error) {
		m, err := release.Lookup(mech)
		if err != nil {
			return nil, err
		}
		return m.Prepare(ctx, rows, b)
	}}
}

// SelectOptions configures Select. Every zero value is documented.
type SelectOptions struct {
	// Eta in [0, 1] is the shape of the law of the number of runs K, the
	// truncated negative binomial TNB(eta, gamma) of Papernot & Steinke:
	// the selection costs (2 + eta) times one run. Zero (the default) is
	// the logarithmic law, P[K = k] proportional to (1 - gamma)^k / k, for
	// a total of twice the budget of one run; 1 is the geometric law of
	// Liu & Talwar's random stopping (three times one run), whose lighter
	// tail tries more candidates for the same mean. (Papernot & Steinke's
	// bound also holds for eta in (-1, 0), at a cost below twice one run,
	// but that law draws K = 1 in about half the selections and its heavy
	// tail puts mass at K beyond any feasible run count; measured on Adult
	// it was worse, and it is not offered.) A positive eta is at least
	// 1e-300: a smaller one is the law of eta = 0 up to rounding, and
	// below about 1e-300 its constants lose their precision.
	Eta float64
	// MeanRuns is E[K] > 1; gamma is solved from it. Zero means 10 times
	// the number of candidates.
	MeanRuns float64
	// Noise is the source of every random draw (K, the candidates, the
	// release noise and the score noise). Nil means perturb.Secure(), the
	// only source whose selection is private. A seeded source
	// (perturb.Seeded) makes a reproducible simulation for experiments: its
	// certificate says it is not private, and the candidates' weights are
	// not used up.
	Noise perturb.Source
}

// Selection is the outcome of Select: the released weights of the best run,
// which candidate produced them, and its noisy validation score. Nothing
// else of the runs (their number, the other candidates tried, their scores)
// is part of the output.
type Selection struct {
	// Index and Name identify the chosen candidate.
	Index int
	Name  string
	// Model holds the released weights of the chosen run.
	Model *trainer.Model
	// Score is the run's validation accuracy plus its Laplace noise.
	Score float64
	// Certificate is the chosen run's certificate, with Epsilon the whole
	// budget of the selection and a Ledger of its two parts:
	// eps_select = (1 + eta) eps_run and eps_release = eps_run.
	Certificate *release.Certificate
	// Prepared is the chosen candidate's prepared release, for its
	// stability analysis (its weights are used up unless seeded).
	Prepared release.Prepared
}

// ValidationSplit splits n training rows by position into a training part
// and a validation part of about frac*n rows (datasets.SplitIndex): a
// function of (n, frac, seed) alone, so a replaced row is in at most one
// part, and the sizes of both parts are public.
func ValidationSplit(n int, frac float64, seed uint64) (train, val []int, err error) {
	if !check.OpenUnit(frac) {
		return nil, nil, fmt.Errorf("%w: validation fraction %v, want in (0, 1)", ErrSelect, frac)
	}
	train, val, err = datasets.SplitIndex(n, frac, seed^0x5e1ec7)
	if err == nil && (len(train) == 0 || len(val) == 0) {
		err = fmt.Errorf("%w: %d rows cannot be split into non-empty training and validation parts at fraction %v", ErrSelect, n, frac)
	}
	return train, val, err
}

// SelectNeighbours is the neighbouring relation of a selection's
// certificate.
const SelectNeighbours = "replace-one on the rows before the ValidationSplit (the candidates' training part and the validation rows together, same size), with the same candidates, settings and seeds"

// SelectStep names the first entry of a selection's ledger.
const SelectStep = "private selection: the best of K runs by noisy validation accuracy, K ~ TNB(eta, gamma), each run a uniformly drawn candidate (Papernot & Steinke 2022, Theorem 2)"

// Select chooses a candidate and releases its weights inside the budget
// (eps, 0): it draws K from TNB(eta, gamma), runs K times the algorithm Q
// below, and returns the run with the highest score. One run Q:
//
//  1. draws a candidate c uniformly (a public choice),
//  2. releases c's weights with c's mechanism at eps_run = eps/(2 + eta),
//     calibrated to c's sensitivity (fresh noise each run); for a
//     training-time candidate (Rows), minimizes its objective perturbed by
//     fresh noise calibrated to eps_run, on its rows,
//  3. scores the release by its accuracy on the validation rows (Xval,
//     yval) plus Laplace noise of scale 1/(n_val eps_run).
//
// # Privacy
//
// Neighbours are replace-one on the rows before the ValidationSplit, with
// the same settings and seeds. Q is eps_run-DP: the split is by position,
// so the differing row is in the training part or in the validation part,
// never both (parallel composition). In the training part, step 2 is
// eps_run-DP for each candidate (its stability route bounds the change of
// its weights; for a training-time candidate, the guarantee of objective
// perturbation at eps_run, docs/DESIGN.md section 11, with lambda at or
// above the floor at eps_run) and step 3 is post-processing of the release with fixed
// validation rows. In the validation part, the weights are unchanged and
// the accuracy moves by at most 1/n_val, so step 3 is the Laplace
// mechanism at eps_run (Dwork & Roth 2014, Theorem 3.6).
//
// The best of K runs is then (2 + eta) eps_run = eps-DP (Papernot & Steinke
// 2022, "Hyperparameter Tuning with Renyi Differential Privacy", Theorem 2
// in its pure-DP case; for eta = 1 it is Liu & Talwar 2019, "Private
// Selection from Private Candidates", random stopping, 3 eps). The proof,
// for outputs totally ordered by (score, candidate, weights): with
// F(y) = P[Q(D) <= y] and f the probability generating function of K,
// P[best <= y] = f(F(y)), so the law of the best has the density (or mass)
// f'(t) dF(y) at t = F(y) (integrated over the atom of y at an atom). For
// TNB(eta, gamma), f'(t) is proportional to (gamma + (1 - gamma)(1 - t))^-(1+eta).
// Against a neighbour D', dF <= e^eps_run dF' (Q is eps_run-DP), and
// 1 - F(y) = P[Q(D) > y] >= e^-eps_run (1 - F'(y)), so
// f'(F(y)) <= e^((1+eta) eps_run) f'(F'(y)): the ratio of the laws is at
// most e^((2+eta) eps_run). The ledger lists it as eps_select =
// (1 + eta) eps_run for the repetition and selection, plus eps_release =
// eps_run for the run that is output; they add up to eps.
//
// The candidates' choice and the law of K are public; K, the other runs and
// their scores are not output. The floating-point sampling of K and of the
// candidate index lies outside the exact claim, like the rounding of the
// training (docs/DESIGN.md, section 3).
//
// Only pure mechanisms are accepted (ErrSelect otherwise). With any source
// but a seeded one (the secure source, or a caller's) every trained
// candidate's weights are used up (wiped), whatever was chosen; a seeded
// source simulates and leaves them. Trained candidates are locked in a
// fixed order, so concurrent selections over shared candidates do not
// deadlock. The validation rows must be disjoint from every candidate's
// training rows (the parts of a ValidationSplit are); Select cannot check
// it, and the certificate states it as an assumption.
func Select(ctx context.Context, cands []Candidate, Xval mat.Matrix, yval []float64, budget dp.Budget, opts SelectOptions) (*Selection, error) {
	if len(cands) == 0 {
		return nil, fmt.Errorf("%w: no candidates", ErrSelect)
	}
	if !check.Positive(budget.Epsilon) || budget.Delta != 0 {
		return nil, fmt.Errorf("%w: budget (%v, %v), want eps > 0 finite and delta = 0 (the selection's accounting is for pure runs)", ErrSelect, budget.Epsilon, budget.Delta)
	}
	eta := opts.Eta
	if !(eta == 0 || eta >= minEta && eta <= 1) {
		return nil, fmt.Errorf("%w: eta = %v, want 0 or in [%g, 1] (a smaller eta is eta = 0 up to rounding)", ErrSelect, eta, minEta)
	}
	mean := opts.MeanRuns
	if mean == 0 {
		mean = 10 * float64(len(cands))
	}
	if !(mean > 1) || math.IsInf(mean, 0) || mean > 1e6 {
		return nil, fmt.Errorf("%w: mean number of runs %v, want in (1, 1e6]", ErrSelect, mean)
	}
	nval := len(yval)
	if Xval == nil || isNilMatrix(Xval) || nval == 0 {
		return nil, fmt.Errorf("%w: no validation rows", ErrSelect)
	}
	r, d := Xval.Dims()
	if r != nval {
		return nil, fmt.Errorf("%w: %d validation rows, %d labels", ErrSelect, r, nval)
	}
	epsRun := runBudget(budget.Epsilon, eta)
	ps := make([]release.Prepared, len(cands))
	for i, c := range cands {
		p, err := prepare(ctx, c, epsRun, d)
		if err != nil {
			if errors.Is(err, ErrSelect) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: candidate %d (%s) at eps_run = %g: %w", ErrSelect, i, c.Name, epsRun, err)
		}
		ps[i] = p
	}
	gamma, err := tnbGamma(eta, mean)
	if err != nil {
		return nil, err
	}
	src := opts.Noise
	if src == nil {
		src = perturb.Secure()
	}
	seeded := perturb.SourceName(src) == perturb.SourceSeeded
	dense := mat.DenseCopyOf(Xval)

	// Hold every candidate for the whole selection: a release elsewhere
	// between two runs would reuse the weights outside this budget.
	hold, err := release.NewHold(ps, seeded)
	if err != nil {
		return nil, err
	}
	defer hold.Close()

	k := sampleTNB(eta, gamma, src.Uniform)
	var best *Selection
	var bestKey selectKey
	for run := 0; run < k; run++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// From the first run on, the candidates are used up at Close,
		// whatever happens next (an error or a cancelled ctx included);
		// only a seeded simulation leaves them.
		ci := min(int(src.Uniform()*float64(len(cands))), len(cands)-1)
		out, err := hold.Release(ctx, ci, src)
		if err != nil {
			return nil, err
		}
		m, cert := out.Model, out.Certificate
		score := []float64{m.Accuracy(dense, yval)}
		if err := src.AddLaplace(score, 1/float64(nval), epsRun); err != nil {
			return nil, err
		}
		key := selectKey{score: score[0], index: ci, w: m.W}
		if best == nil || bestKey.less(key) {
			best = &Selection{Index: ci, Name: cands[ci].Name, Model: m, Score: score[0], Certificate: cert, Prepared: ps[ci]}
			bestKey = key
		}
	}
	if err := finishSelect(best.Certificate, budget.Epsilon, epsRun, eta, gamma, mean, len(cands), nval); err != nil {
		return nil, err
	}
	best.Certificate.NoiseSeed = perturb.NoiseSeed(src)
	return best, nil
}

// finishSelect rewrites the certificate c of the selected run, released at
// eps_run, into the selection's certificate: the whole eps, a ledger of the
// selection and the release (which add up to eps), the selection's
// assumptions and its neighbouring relation. Select and a verifier
// (Record.FinishSelected) share it. The selection and the release are
// taken from a ledger of eps, the selection's own (as a release's: package
// release's doc, "Ledgers"): a verifier rebuilds it from the published
// constants, and the owner of a larger budget (private.Plan) takes its
// charges from its ledger. An error means they do not fit in it.
func finishSelect(c *release.Certificate, eps, epsRun, eta, gamma, mean float64, ncand, nval int) error {
	selectEps := dp.Rest(eps, epsRun) // at least (1 + eta) eps_run (runBudget); the parts add up to at most eps
	l, err := dp.NewLedger(dp.Budget{Epsilon: eps, Delta: c.Delta},
		dp.Charge{Step: SelectStep, Mechanism: perturb.Laplace, Epsilon: selectEps},
		dp.Charge{Step: "release of the selected run's weights (" + string(c.Mechanism) + ") and of its validation score (Laplace, sensitivity 1/n_val, on the disjoint validation rows)", Mechanism: c.Mechanism, Epsilon: epsRun},
	)
	if err != nil {
		return err
	}
	// The hold's runs are not releases on their own: this one is.
	c.Private = c.Source == perturb.SourceSecure
	c.Account(l)
	c.Assumptions = append(c.Assumptions,
		fmt.Sprintf("private selection among %d candidates (eta = %g, gamma = %.6g, E[K] = %.4g): composition rule of Papernot & Steinke 2022, Theorem 2, pure case: "+
			"the best of K runs of an eps_run-DP run is (2 + eta) eps_run-DP, eps_select + eps_release = %.6g + %.6g = %.6g; the noise scale is calibrated to eps_run",
			ncand, eta, gamma, mean, selectEps, epsRun, eps),
		fmt.Sprintf("validation: %d rows, assumed disjoint from every candidate's training rows (as the parts of a ValidationSplit by position are; Select cannot check it: a validation row that a candidate also trained on makes each run 2 eps_run-DP, not eps_run)", nval),
		"the floating-point sampling of the number of runs K and of the candidate index lies outside the exact claim")
	c.Neighbouring = SelectNeighbours
	return nil
}

// prepare prepares a candidate at the budget of one run and checks it: a
// pure mechanism and weights of d inputs.
func prepare(ctx context.Context, c Candidate, epsRun float64, d int) (release.Prepared, error) {
	if c.Prepare == nil {
		return nil, fmt.Errorf("%w: candidate %q cannot be prepared", ErrSelect, c.Name)
	}
	p, err := c.Prepare(ctx, dp.Budget{Epsilon: epsRun})
	if err != nil {
		return nil, err
	}
	m, err := release.Lookup(p.Mechanism())
	if err != nil {
		return nil, err
	}
	if !m.Name().Pure() {
		return nil, fmt.Errorf("mechanism %q is not pure eps-DP", m.Name())
	}
	if k, dim := p.Shape(); dim != d {
		return nil, fmt.Errorf("%d x %d weights, the validation rows have %d inputs", k, dim, d)
	}
	return p, nil
}

// isNilMatrix reports whether m is a nil pointer in a non-nil interface,
// or a transpose of one.
func isNilMatrix(m mat.Matrix) bool {
	if u, ok := m.(mat.Untransposer); ok {
		if inner := u.Untranspose(); inner == nil || isNilMatrix(inner) {
			return true
		}
	}
	v := reflect.ValueOf(m)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// selectKey is the total order on the outputs of a run: the score, then the
// candidate index, then the weights lexicographically.
type selectKey struct {
	score float64
	index int
	w     []float64
}

func (a selectKey) less(b selectKey) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	if a.index != b.index {
		return a.index < b.index
	}
	for i := range a.w {
		if a.w[i] != b.w[i] {
			return a.w[i] < b.w[i]
		}
	}
	return false
}

// RunEpsilon returns the budget of one run of a random-stopping selection
// of the whole eps with eta (runBudget): what Select calibrates each run
// to, for a caller that prepares candidates at it.
func RunEpsilon(eps, eta float64) float64 { return runBudget(eps, eta) }

// runBudget returns eps_run = eps/(2 + eta), lowered by a few ulps so
// that (eps - eps_run) + eps_run == eps in float64 and (2 + eta) eps_run
// <= eps in exact arithmetic: the selection's claim, (2 + eta) eps_run,
// is then never above eps, and the ledger's two parts (dp.Rest) add up to
// at most eps.
func runBudget(eps, eta float64) float64 {
	r := eps / (2 + eta)
	for i := 0; r > 0; i++ {
		if claimWithin(eta, r, eps) && (i >= 16 || (eps-r)+r == eps) {
			break
		}
		r = math.Nextafter(r, 0)
	}
	return r
}

// claimWithin reports whether (2 + eta) r <= eps in exact arithmetic
// (eta, r, eps finite).
func claimWithin(eta, r, eps float64) bool {
	a := new(big.Rat).Add(big.NewRat(2, 1), new(big.Rat).SetFloat64(eta))
	return a.Mul(a, new(big.Rat).SetFloat64(r)).Cmp(new(big.Rat).SetFloat64(eps)) <= 0
}

// tnbMean returns E[K] of TNB(eta, gamma): for eta = 0 the logarithmic law,
// (1/gamma - 1)/ln(1/gamma); otherwise eta (1 - gamma)/(gamma (1 - gamma^eta)).
func tnbMean(eta, gamma float64) float64 {
	if eta == 0 {
		return (1/gamma - 1) / -math.Log(gamma)
	}
	return eta * (1 - gamma) / (gamma * -math.Expm1(eta*math.Log(gamma)))
}

// tnbFirst returns P[K = 1] of TNB(eta, gamma): (1 - gamma)/ln(1/gamma) for
// eta = 0, eta (1 - gamma)/(gamma^-eta - 1) otherwise (by expm1, without
// cancellation for a small eta).
func tnbFirst(eta, gamma float64) float64 {
	if eta == 0 {
		return (1 - gamma) / -math.Log(gamma)
	}
	return eta * (1 - gamma) / math.Expm1(-eta*math.Log(gamma))
}

// minEta is the smallest positive eta of a selection.
const minEta = 1e-9

// minGamma is the smallest gamma of a selection: the law of K then falls
// by a factor 1 - gamma <= 1 - 1e-6 per step, so its tail is finite in
// float64 (sampleTNB).
const minGamma = 1e-6

// tnbGamma solves E[K] = mean for gamma in (0, 1) by bisection on log gamma
// (E[K] decreases in gamma, from infinity to 1).
func tnbGamma(eta, mean float64) (float64, error) {
	lo, hi := math.Log(minGamma), -1e-9 // log gamma
	if tnbMean(eta, minGamma) < mean {
		return 0, fmt.Errorf("%w: mean number of runs %v too large for eta = %v (at most %.6g, gamma >= %g)", ErrSelect, mean, eta, tnbMean(eta, minGamma), minGamma)
	}
	for range 200 {
		mid := (lo + hi) / 2
		if tnbMean(eta, math.Exp(mid)) > mean {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Exp((lo + hi) / 2), nil
}

// tnbPMF returns P[K = k] for k = 1..len(p) of TNB(eta, gamma):
// proportional to (1 - gamma)^k prod_{l=0}^{k-1} (l + eta)/(l + 1) for
// eta != 0, and to (1 - gamma)^k / k for eta = 0.
func tnbPMF(eta, gamma float64, p []float64) {
	p1 := tnbFirst(eta, gamma)
	for i := range p {
		if i == 0 {
			p[0] = p1
			continue
		}
		p[i] = p[i-1] * (1 - gamma) * (float64(i) + eta) / float64(i+1)
	}
}

// sampleTNB draws K from TNB(eta, gamma), eta in [0, 1] and gamma >= 1e-6,
// by inversion with one uniform:
// P[K = k+1]/P[K = k] = (1 - gamma)(k + eta)/(k + 1).
func sampleTNB(eta, gamma float64, uniform func() float64) int {
	p1 := tnbFirst(eta, gamma)
	for {
		u := uniform()
		p, cum, k := p1, p1, 1
		// P[K = k] falls geometrically, by at least 1 - gamma <= 1 - 1e-6
		// per step (tnbGamma), so within about 37/gamma steps p is below
		// the rounding of cum and cum stops growing. A u above that final
		// sum (a probability of at most about 1e-10) is drawn again: the
		// law sampled is TNB(eta, gamma) without the tail that float64
		// cannot accumulate, the floating-point sampling the claim leaves
		// out. Nothing is put on a cap.
		for cum < u && cum+p != cum {
			p *= (1 - gamma) * (float64(k) + eta) / float64(k+1)
			cum += p
			k++
		}
		if cum >= u {
			return k
		}
	}
}
