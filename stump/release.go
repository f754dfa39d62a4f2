package stump

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// Loss names the loss a released stump's model and run record carry: a
// binary margin loss without class probabilities, so that a model file's
// reader applies the stump's weights as a margin classifier (class +1 at a
// margin >= 0) and prints no probabilities. The stump is not trained on it:
// it is chosen by its number of correct training rows (the certificate
// says so).
const Loss = "huber-hinge"

// MultiLoss names the loss a multiclass stump's model and run record
// carry: the multiclass loss, so that a reader applies the K outputs by
// their argmax. Its margins are not log-odds: a model file's reader gives
// no class probabilities for a stump (modelfile), and the certificate says
// the stump was chosen by its count of correct rows.
const MultiLoss = "softmax"

// Citation is the reference of a stump's certificate.
const Citation = "Kasiviswanathan, Lee, Nissim, Raskhodnikova & Smith 2011, \"What can we learn privately?\", SIAM J. Comput. 40(3), Section 3 (private learning of a finite class by the exponential mechanism of McSherry & Talwar 2007); " + perturb.PermuteAndFlipCitation

// method is the release method of the decision stump, registered with
// package release under the name perturb.Stump: a one-feature threshold
// classifier of a public finite class chosen by permute-and-flip, utility
// the number of training rows classified correctly (sensitivity 1 under
// replace-one). It reads rows [z, 1] of the
// stump map (preprocess.RowMap.Stump: the per-feature map z, each entry in
// [-1, 1], and the bias 1; a null row is zero, bias included), so the
// pipeline gives it those rows instead of the unit-ball rows
// (release.TakesStumpRows). Pure eps-DP: a delta in the budget is unused.
type method struct{}

// Importing the package registers the stump's release method: a program
// that trains or verifies a stump (release.Lookup(perturb.Stump)) imports
// it, as the certified pipeline and the model files do.
func init() { release.Register(method{}) }

func (method) Name() dp.Mechanism { return perturb.Stump }

// The claim is pure eps-DP (dp.Stump.Pure). CheckBudget accepts a delta,
// which a pure claim implies and the certificate says is unused.

// SGD is false: nothing is trained.
func (method) SGD() bool { return false }

// TakesStumpRows is true (release.StumpRowsTaker): the stump decides on
// the per-feature values z of the stump map, before the unit-ball map.
func (method) TakesStumpRows() bool { return true }

// CheckBudget accepts every valid budget: the stump is eps-DP, which
// implies (eps, delta)-DP for every delta; a delta is not used.
func (method) CheckBudget(b dp.Budget) error { return b.Validate() }

// CheckConfig refuses what a stump cannot do: a loss that is neither
// binary (two classes) nor multiclass with 2 to MaxClasses classes
// (the multiclass stump, whose class grows as K^2), and every training
// knob (lambda, clipping, dropout, a radius, averaging, a tolerance, an L1
// ratio, a user model), which a stump has none of.
func (method) CheckConfig(cfg trainer.Config) error {
	switch {
	case cfg.Loss != nil && cfg.Loss.Task() == losses.Multiclass:
		if cfg.Classes == 1 || cfg.Classes > MaxClasses { // 0: not yet known (Prepare checks K)
			return fmt.Errorf("%w: the multiclass stump takes 2 to %d classes, not %d: its class has K (K-1) pairs per threshold", release.ErrConfig, MaxClasses, cfg.Classes)
		}
	case cfg.Loss != nil && cfg.Loss.Task() != losses.Binary || cfg.Classes > 2:
		what := fmt.Sprintf("%d classes with a binary loss", cfg.Classes)
		if cfg.Loss != nil {
			what = fmt.Sprintf("the %s loss (%v)", cfg.Loss.Name(), cfg.Loss.Task())
		}
		return fmt.Errorf("%w: the stump is a classifier, not for %s: use logistic for two classes, softmax for more", release.ErrConfig, what)
	}
	var bad []string
	if cfg.Reg.Lambda != 0 || cfg.Reg.L1Ratio != 0 {
		bad = append(bad, "lambda or an l1 ratio")
	}
	if cfg.Clip != 0 || cfg.Dropout != 0 && cfg.Dropout != 1 || cfg.Radius != 0 || cfg.Average || cfg.Tolerance != 0 || cfg.Model != nil {
		bad = append(bad, "clipping, dropout, a radius, averaging, a tolerance or a user model")
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: the stump has no training knobs (it chooses a classifier of a fixed public class); the settings give %s", release.ErrConfig, strings.Join(bad, " and "))
	}
	return nil
}

// classesOf returns the number of classes K of a multiclass stump for
// cfg (CheckConfig's), or 0 for a binary stump.
func classesOf(cfg trainer.Config) int {
	if cfg.Loss != nil && cfg.Loss.Task() == losses.Multiclass {
		return cfg.Classes
	}
	return 0
}

// rule is the sentence of the stump's Auto.
var rule = fmt.Sprintf("the stump has no knobs: its class is fixed by public values (every mapped feature, the %d thresholds -1 + 2k/%d of the grid, both signs; the pairs of features or the intervals where their guarantee holds)", DefaultGrid, DefaultGrid+1)

// Auto returns cfg as it is: a stump has no knobs.
func (m method) Auto(cfg trainer.Config, n, dim int, b dp.Budget) (trainer.Config, string, error) {
	return m.AutoScaled(cfg, n, dim, b, 1)
}

// AutoScaled is Auto; the scale has nothing to scale.
func (method) AutoScaled(cfg trainer.Config, n, dim int, b dp.Budget, scale float64) (trainer.Config, string, error) {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return cfg, "", fmt.Errorf("%w: lambda scale %v, want finite > 0", release.ErrConfig, scale)
	}
	return cfg, rule, nil
}

// NoiseRatio is +Inf: no noise is added to weights, so the forecast of
// noise against weights does not apply (the stump's error is that of its
// choice, bounded by Kasiviswanathan et al.'s utility theorem). Predict
// never picks it among other methods and warns of nothing for it alone.
func (method) NoiseRatio(trainer.Config, int, int, dp.Budget) (float64, error) {
	return math.Inf(1), nil
}

// Prepare checks the rows (the stump map's [z, 1], null rows zero) and
// computes every candidate's score: the work before the draw.
func (m method) Prepare(ctx context.Context, rows release.Rows, b dp.Budget) (release.Prepared, error) {
	if err := m.CheckBudget(b); err != nil {
		return nil, err
	}
	if err := m.CheckConfig(rows.Config); err != nil {
		return nil, err
	}
	if rows.X == nil {
		return nil, fmt.Errorf("%w: no rows", release.ErrConfig)
	}
	n, d := rows.X.Dims()
	if d < 2 || len(rows.Y) != n {
		return nil, fmt.Errorf("%w: %d rows of %d inputs and %d labels: the stump needs rows [z, 1] of at least one feature", release.ErrConfig, n, d, len(rows.Y))
	}
	null := make([]bool, n)
	for i := range n {
		switch rows.X.At(i, d-1) {
		case 0:
			null[i] = true
		case 1:
		default:
			return nil, fmt.Errorf("%w: row %d has bias %v: the stump reads rows [z, 1] of the stump map (preprocess.RowMap.Stump), 0 for a null row", release.ErrConfig, i, rows.X.At(i, d-1))
		}
	}
	Z := rows.X.Slice(0, n, 0, d-1)
	K := classesOf(rows.Config)
	fam := currentFamily(b, n, d-1, K)
	var scores []int64
	var err error
	switch {
	case K > 0:
		scores, err = MultiClassScores(Z, rows.Y, null, K, fam.T, fam.intervals)
	case fam.pairs:
		scores, err = BinaryScores(Z, rows.Y, null, fam.T)
	default:
		scores, err = Scores(Z, rows.Y, null, fam.T)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", release.ErrConfig, err)
	}
	return &prepared{scores: scores, n: n, p: d - 1, classes: K, family: fam, budget: b, notes: slices.Clone(rows.Notes), seed: rows.Config.Seed}, nil
}

// prepared holds the scores of the candidates until the draw.
type prepared struct {
	scores []int64
	n, p   int
	// classes is K for a multiclass stump, 0 for a binary one.
	classes int
	// family is the class the scores are of (currentFamily).
	family family
	budget dp.Budget
	notes  []string
	seed   uint64

	mu       sync.Mutex
	released bool
}

func (p *prepared) Mechanism() dp.Mechanism { return perturb.Stump }
func (p *prepared) Budget() dp.Budget       { return p.budget }
func (p *prepared) Shape() (int, int)       { return max(p.classes, 1), p.p + 1 }
func (p *prepared) Describe() string {
	return "a decision stump chosen by permute-and-flip on the training part"
}
func (p *prepared) Stability() *stability.Report { return nil }

// Release draws the stump by permute-and-flip from src (nil means
// perturb.Secure(); a source other than Secure and Seeded is refused:
// the exact sampler needs random bits) and returns its weights on [z, 1]
// (Stump.Weights) and the certificate.
func (p *prepared) Release(ctx context.Context, src perturb.Source, extra ...string) (*release.Outcome, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released {
		return nil, fmt.Errorf("%w: a second draw from the same rows needs its own budget and is refused", release.ErrReleased)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if src == nil {
		src = perturb.Secure()
	}
	r, err := perturb.PermuteAndFlip(src, p.scores, p.budget.Epsilon, Sensitivity)
	if err != nil {
		return nil, err
	}
	p.released = true
	w := p.model(r)
	clear(p.scores)
	notes := append(slices.Clone(p.notes), extra...)
	cert, err := certificate(p.budget, p.n, p.p, p.classes, p.family, p.seed, perturb.SourceName(src), notes)
	if err != nil {
		return nil, err
	}
	// As every release: the noise seed of a seeded source, and the
	// weights' hash with every zero +0 (a verifier refuses a -0).
	dp.PositiveZeros(w.W)
	cert.NoiseSeed = perturb.NoiseSeed(src)
	cert.WeightsSHA256 = dp.WeightsSHA256(w.W)
	return &release.Outcome{Model: w, Certificate: cert}, nil
}

// model returns the model of candidate r.
func (p *prepared) model(r int) *trainer.Model {
	if K := p.classes; K > 0 {
		m, _ := MultiMemberFromIndex(r, p.p, p.family.T, K, p.family.intervals)
		return &trainer.Model{Loss: MultiLoss, Task: losses.Multiclass, K: K, D: p.p + 1, W: m.Weights(p.p, p.family.T, K)}
	}
	s, _ := BinaryFromIndex(r, p.p, p.family.T)
	return &trainer.Model{Loss: Loss, Task: losses.Binary, K: 1, D: p.p + 1, W: s.Weights(p.p, p.family.T)}
}

// Trained calls f with the best stump (the first of the largest score):
// a non-private diagnostic. It fails after Release.
func (p *prepared) Trained(_ context.Context, f func(*trainer.Model, trainer.Stats)) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released {
		return fmt.Errorf("%w: the stump was drawn; the scores are no longer available", release.ErrReleased)
	}
	best := 0
	for r, q := range p.scores {
		if q > p.scores[best] {
			best = r
		}
	}
	f(p.model(best), trainer.Stats{})
	return nil
}

// binaryClass is the certificate's sentence on the public class of a
// binary stump of p mapped features on a grid of T thresholds.
func binaryClass(p, T int) string {
	return fmt.Sprintf("the class is public: the %d mapped features (from the header and the schema) x the %d thresholds t_k = -1 + 2k/%d, k = 1..%d, of the grid (interior points of every column's mapped range [-1, 1], that is of its declared or privately estimated bounds) x 2 signs = %d candidates h(z) = +1 if s (z_j - t) >= 0, else -1; the released weights are the chosen candidate's on [z, 1] (s on feature j, -s t on the bias, zeros elsewhere), a member of that class", p, T, T+1, T, Candidates(p, T))
}

// certificate returns the certificate of a stump released at b from
// n training rows of p mapped features (K classes for a multiclass stump,
// 0 for a binary one, whose class is fam) with the trainer seed seed, the noise source kind
// and the notes, without the weights' hash and the noise seed: a function
// of published constants, which Rebuild calls too.
func certificate(b dp.Budget, n, p, K int, fam family, seed uint64, source string, notes []string) (*release.Certificate, error) {
	run := &trainer.Run{Loss: Loss, Task: losses.Binary.String(), N: n, D: p + 1, K: 1, Seed: seed}
	class := fam.class(p, K)
	loss := Loss + ") only makes readers apply the weights as a margin classifier without probabilities"
	if K > 0 {
		run = &trainer.Run{Loss: MultiLoss, Task: losses.Multiclass.String(), N: n, D: p + 1, K: K, Seed: seed}
		loss = MultiLoss + ") only makes readers apply the weights by their argmax; they are not log-odds and give no class probabilities"
	}
	c := &release.Certificate{Claim: dp.Claim{
		Version:          dp.CertificateVersion,
		Private:          source == perturb.SourceSecure,
		Mechanism:        perturb.Stump,
		Epsilon:          b.Epsilon,
		Delta:            b.Delta,
		Dim:              run.K * (p + 1),
		SensitivityRoute: fmt.Sprintf("utility: the number of the n = %d training rows the stump classifies correctly; replacing one row moves every candidate's count by at most %d (it is counted correct or not), so the utility's sensitivity is %d", n, Sensitivity, Sensitivity),
		NoiseScale:       2 * Sensitivity / b.Epsilon,
		NoiseScaleName:   "2 Delta_u / eps (permute-and-flip accepts candidate r with probability exp(-(q* - q_r) / scale))",
		Neighbouring:     perturb.ReplaceOneText,
		Source:           source,
		Citation:         Citation,
	}, Run: run}
	l, err := dp.NewLedger(b, dp.Charge{Step: "choice of the decision stump by permute-and-flip (pure eps; a delta in the budget is not used)", Mechanism: perturb.Stump, Epsilon: b.Epsilon, Delta: b.Delta})
	if err != nil {
		return nil, err
	}
	c.Account(l)
	c.Assumptions = []string{
		class,
		fmt.Sprintf("the choice is permute-and-flip at eps = %g with the utility's sensitivity %d: candidates visited in a uniformly random order, candidate r accepted with probability exp(-eps (q* - q_r) / 2), q* the largest count; the order and the coins are drawn exactly (uniform integers, Bernoulli(exp(-gamma)) for rational gamma, no floating point in a probability); the running time varies with the draws, a timing channel outside the claim", b.Epsilon, Sensitivity),
		"the stump decides on the per-feature map z before the unit-ball map (the preprocessing's stump map x' = [z, 1]); the run record's loss (" + loss + ": the stump was chosen by its count of correct training rows (the 0-1 loss), and no loss, lambda or kappa enters the claim (kappa 0: the rows are not scaled into the unit ball)",
		"the run constants in this certificate (including n) are published in the clear",
		"only one draw from these rows is covered; a second draw needs its own budget",
	}
	if b.Delta > 0 {
		c.Assumptions = append(c.Assumptions, fmt.Sprintf("the mechanism is pure eps-DP: the budget's delta = %g is not used (an eps-DP release is (eps, delta)-DP for every delta)", b.Delta))
	}
	switch {
	case source == perturb.SourceSeeded:
		c.Assumptions = append(c.Assumptions, "the random order and coins were drawn from a seeded generator and can be recomputed from the seed: not for release")
	case source != perturb.SourceSecure:
		c.Assumptions = append(c.Assumptions, "the random bits came from a caller-supplied source whose quality is not verified")
	}
	c.Assumptions = append(c.Assumptions, notes...)
	return c, nil
}

// Rebuild recomputes a stump's certificate from its published constants
// (budget, n, the model's inputs, the seed, the source) and pub's notes.
// It refuses a model of another shape: a binary stump has one output for
// two classes, a multiclass stump one output per class for 2 to
// MaxClasses classes, and either at least one feature besides the
// bias.
func (method) Rebuild(c *release.Certificate, pub release.Public) (*release.Certificate, *stability.Report, error) {
	if c == nil || c.Run == nil {
		return nil, nil, fmt.Errorf("%w: the certificate has no run record", release.ErrConfig)
	}
	run := c.Run
	K, loss := 0, Loss
	if pub.K > 1 {
		K, loss = pub.K, MultiLoss
	}
	switch {
	case pub.D < 2 || (pub.K != 1 || pub.Classes != 2) && (pub.K != pub.Classes || pub.K < 2 || pub.K > MaxClasses):
		return nil, nil, fmt.Errorf("a stump has 1 output (2 classes) or 1 per class (2 to %d) and a feature; the model: %d outputs, %d classes, %d inputs", MaxClasses, pub.K, pub.Classes, pub.D)
	case run.Loss != loss || run.D != pub.D:
		return nil, nil, fmt.Errorf("a stump's run record has the loss %s and the model's %d inputs; it has %s and %d", loss, pub.D, run.Loss, run.D)
	case pub.AutoScale != 0 && pub.AutoScale != 1:
		return nil, nil, errors.New("a stump is never chosen by a selection with a scale")
	}
	if err := (dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}).Validate(); err != nil {
		return nil, nil, err
	}
	if c.Source == perturb.SourceSeeded && c.NoiseSeed == nil {
		return nil, nil, errors.New("a seeded release without its noise seed")
	}
	notes := append(slices.Clone(pub.Notes), pub.Extra...)
	cert, err := certificate(dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}, run.N, pub.D-1, K, certifiedFamily(c, run.N, pub.D-1, K), run.Seed, c.Source, notes)
	if err != nil {
		return nil, nil, err
	}
	if c.Source == perturb.SourceSeeded {
		seed := *c.NoiseSeed
		cert.NoiseSeed = &seed
	}
	return cert, nil, nil
}

// CheckWeights requires w to be a member of the stump's public class, bit
// for bit: for one output (BinaryFromWeights on the binary class the
// certificate names, certifiedFamily: the grid of DefaultGrid thresholds
// with or without the pairs, or LegacyGrid's) one feature weight +1 or -1,
// or a pair's +s and -s, zeros, and a bias -s t_k on the grid; for K
// outputs (MultiMemberFromWeights, the grid of MultiGrid, with the
// intervals where the certificate's class holds them) the weights of a
// multiclass stump or interval. Weights outside the class cannot come
// from the mechanism.
func (method) CheckWeights(c *release.Certificate, pub release.Public, w []float64) error {
	if pub.K < 1 || len(w) != pub.K*pub.D {
		return fmt.Errorf("%w: %d weights for %d outputs of %d inputs", release.ErrConfig, len(w), pub.K, pub.D)
	}
	n := 0
	if c != nil && c.Run != nil {
		n = c.Run.N
	}
	var err error
	if pub.K > 1 {
		f := certifiedFamily(c, n, pub.D-1, pub.K)
		_, err = MultiMemberFromWeights(w, pub.K, f.T, f.intervals)
	} else {
		f := certifiedFamily(c, n, pub.D-1, 0)
		_, err = BinaryFromWeights(w, f.T, f.pairs)
	}
	if err != nil {
		return fmt.Errorf("%w: the weights are not a stump of the public class: %w", release.ErrConfig, err)
	}
	return nil
}
