package perturb

import (
	"fmt"
	"math"
	"strings"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/trainer"
)

// ReplaceOne is the neighbouring relation of every guarantee in this package.
const ReplaceOne = "replace-one"

// replaceOneText is the neighbouring relation spelled out in a certificate.
const replaceOneText = "replace-one: S and S' of equal size differ in one example"

// Sensitivity states how much the trained weights can move between
// neighbouring data sets. The stability package produces it; this package
// takes it as given and does not re-check the conditions of its route.
// FromReport builds it from a stability report, with the report's
// assumptions as notes for ReleaseConfig.Notes, and refuses a report in
// which no route applies.
type Sensitivity struct {
	// L2 > 0 bounds ||w_S - w_S'||_2 over all replace-one neighbours S, S'
	// (for a K x d model: the Frobenius norm of the whole matrix). Required.
	L2 float64 `json:"l2"`
	// L1 bounds ||w_S - w_S'||_1. Zero means sqrt(dim)*L2 (Cauchy-Schwarz);
	// a positive value must be >= L2, and the smaller of L1 and sqrt(dim)*L2
	// is used.
	L1 float64 `json:"l1,omitempty"`
	// Beta is the uniform stability of the training algorithm, recorded for
	// the user (it is what the knobs tune); it does not enter the noise.
	// Zero means not reported.
	Beta float64 `json:"beta"`
	// Route names the bound that gave L2 (e.g. the stability route).
	Route string `json:"route"`
	// Neighbouring is the relation the bounds hold for. The empty string
	// means ReplaceOne; otherwise it must start with ReplaceOne (further
	// wording, e.g. that both runs share the seed, is recorded in the
	// certificate). Other relations are refused.
	Neighbouring string `json:"neighbouring"`
}

// Validate returns an error wrapping ErrSensitivity if the statement cannot
// back a certificate.
func (s Sensitivity) Validate() error {
	if err := checkPositive(ErrSensitivity, "L2 sensitivity", s.L2); err != nil {
		return err
	}
	if !check.NonNegative(s.L1) {
		return fmt.Errorf("%w: L1 sensitivity = %v, want finite >= 0", ErrSensitivity, s.L1)
	}
	if s.L1 > 0 && s.L1 < s.L2 {
		return fmt.Errorf("%w: L1 sensitivity %v below L2 sensitivity %v is impossible", ErrSensitivity, s.L1, s.L2)
	}
	if !check.NonNegative(s.Beta) {
		return fmt.Errorf("%w: beta = %v, want finite >= 0", ErrSensitivity, s.Beta)
	}
	if s.Neighbouring != "" && !strings.HasPrefix(s.Neighbouring, ReplaceOne) {
		return fmt.Errorf("%w: neighbouring relation %q, want %q", ErrSensitivity, s.Neighbouring, ReplaceOne)
	}
	return nil
}

// l1 returns the L1 sensitivity used in dimension dim.
func (s Sensitivity) l1(dim int) float64 {
	cs := math.Sqrt(float64(dim)) * s.L2
	if s.L1 > 0 && s.L1 < cs {
		return s.L1
	}
	return cs
}

// ReleaseConfig sets up a release.
type ReleaseConfig struct {
	// Mechanism is a registered mechanism (Mechanisms: Laplace, Gamma,
	// Gaussian, AnalyticGaussian). The zero value is invalid.
	Mechanism Mechanism
	// Epsilon > 0 is the privacy parameter. The zero value is invalid.
	Epsilon float64
	// Delta in [0, 1) is the privacy parameter: 0 for the pure mechanisms,
	// positive for the Gaussian ones.
	Delta float64
	// Source supplies the noise. Nil means Secure().
	Source Source
	// Notes are extra assumptions not covered by the certificate, added to
	// its list (e.g. "preprocessing statistics fitted on the training data
	// are not privatized"). Nil means none.
	Notes []string
}

// checkModel validates a model and its run.
func checkModel(m *trainer.Model, run *trainer.Run) error {
	if m == nil || run == nil {
		return fmt.Errorf("%w: nil model or run", ErrModel)
	}
	if run.UserModel {
		return fmt.Errorf("%w: the run trained a user-supplied graph model, whose sensitivity is not certified", ErrNotCertified)
	}
	if !run.Convex {
		return fmt.Errorf("%w: loss %q is not convex, and every sensitivity route needs convexity", ErrNotCertified, run.Loss)
	}
	if m.K < 1 || m.D < 1 || len(m.W) != m.K*m.D {
		return fmt.Errorf("%w: model is %dx%d with %d weights", ErrModel, m.K, m.D, len(m.W))
	}
	if run.D != m.D || (run.K != 0 && run.K != m.K) {
		return fmt.Errorf("%w: model is %dx%d but the run records %dx%d", ErrModel, m.K, m.D, run.K, run.D)
	}
	if i := check.FirstNonFinite(m.W); i >= 0 {
		return fmt.Errorf("%w: weight %d is %v", ErrModel, i, m.W[i])
	}
	return nil
}

// Release returns a differentially private copy of the trained model m and
// its certificate. m itself is not modified.
//
// Mechanism: output perturbation, w~ = w + noise, with the noise of
// cfg.Mechanism calibrated by Calibrate to (cfg.Epsilon, cfg.Delta) and the
// sensitivity sens, in dimension K*D: a multiclass (softmax) model is one
// release of the whole K x D matrix, with sens.L2 bounding the Frobenius
// norm of the change of the matrix, and one certificate.
//
// Neighbouring relation: replace-one (S and S' of equal size differ in one
// example). Sensitivity assumption: ||w_S - w_S'||_2 <= sens.L2 (and
// ||.||_1 <= the L1 bound for Laplace) for the training run described by run,
// as established by the stability package; it is taken as given.
//
// Claim: the released weights are (cfg.Epsilon, cfg.Delta)-DP, by the
// theorem the certificate cites, provided the sensitivity bound holds and
// the trained weights are released only once. Release is the primitive and
// cannot know about other releases of the same numbers: once-only is the
// caller's to keep (private.Trained keeps it, wiping the weights).
//
// Runs of a user-supplied graph model or a non-convex loss are refused with
// ErrNotCertified. A nil cfg.Source means Secure().
func Release(m *trainer.Model, run *trainer.Run, sens Sensitivity, cfg ReleaseConfig) (*trainer.Model, *Certificate, error) {
	if err := checkModel(m, run); err != nil {
		return nil, nil, err
	}
	cal, err := Calibrate(cfg.Mechanism, cfg.Epsilon, cfg.Delta, sens, m.K*m.D)
	if err != nil {
		return nil, nil, err
	}
	src := cfg.Source
	if src == nil {
		src = Secure()
	}
	out, err := perturb(m, cal, src)
	if err != nil {
		return nil, nil, err
	}
	c := newCertificate(cal, sens, run, SourceName(src), cfg.Notes, nil)
	c.WeightsSHA256 = WeightsSHA256(out.W)
	return out, c, nil
}

// perturb returns a copy of m with the calibrated noise added.
func perturb(m *trainer.Model, cal Calibration, src Source) (*trainer.Model, error) {
	out := &trainer.Model{Loss: m.Loss, Task: m.Task, K: m.K, D: m.D, W: append([]float64(nil), m.W...)}
	if err := addNoise(out.W, cal, src); err != nil {
		return nil, err
	}
	if i := check.FirstNonFinite(out.W); i >= 0 {
		return nil, fmt.Errorf("%w: released weight %d is %v", ErrSource, i, out.W[i])
	}
	return out, nil
}

// addNoise adds the calibrated noise of cal's mechanism to w in place.
func addNoise(w []float64, cal Calibration, src Source) error {
	n, err := Lookup(cal.Mechanism)
	if err != nil {
		return err
	}
	return n.Add(w, cal, src)
}

// ReleaseOneVsRest releases K >= 2 one-vs-rest binary models, trained on the
// same data set, with a total budget of (cfg.Epsilon, cfg.Delta): each model
// is released by Release's mechanism with (cfg.Epsilon/K, cfg.Delta/K), and
// by basic composition (Dwork & Roth 2014, Theorem 3.16) the K releases
// together are (cfg.Epsilon, cfg.Delta)-DP for replace-one neighbours. Each
// certificate states its share and the total. A softmax model released by
// Release needs no split and is usually preferable.
//
// models[k], runs[k] and sens[k] describe the k-th binary model. All models
// are checked before any noise is drawn: either all are released or none is.
func ReleaseOneVsRest(models []*trainer.Model, runs []*trainer.Run, sens []Sensitivity, cfg ReleaseConfig) ([]*trainer.Model, []*Certificate, error) {
	k := len(models)
	if k < 2 || len(runs) != k || len(sens) != k {
		return nil, nil, fmt.Errorf("%w: one-vs-rest needs K >= 2 models with as many runs and sensitivities, have %d, %d, %d", ErrModel, k, len(runs), len(sens))
	}
	if err := checkPrivacy(cfg.Mechanism, cfg.Epsilon, cfg.Delta); err != nil {
		return nil, nil, err
	}
	share := ReleaseConfig{Mechanism: cfg.Mechanism, Epsilon: cfg.Epsilon / float64(k), Delta: cfg.Delta / float64(k)}
	cals := make([]Calibration, k)
	for i := range models {
		if err := checkModel(models[i], runs[i]); err != nil {
			return nil, nil, fmt.Errorf("model %d: %w", i, err)
		}
		c, err := Calibrate(share.Mechanism, share.Epsilon, share.Delta, sens[i], models[i].K*models[i].D)
		if err != nil {
			return nil, nil, fmt.Errorf("model %d: %w", i, err)
		}
		cals[i] = c
	}
	src := cfg.Source
	if src == nil {
		src = Secure()
	}
	outs := make([]*trainer.Model, k)
	certs := make([]*Certificate, k)
	for i, m := range models {
		out, err := perturb(m, cals[i], src)
		if err != nil {
			return nil, nil, fmt.Errorf("model %d: %w", i, err)
		}
		outs[i] = out
		comp := &Composition{
			Rule:         "basic composition (Dwork & Roth 2014, Theorem 3.16): eps and delta split evenly across the one-vs-rest releases",
			Parts:        k,
			Index:        i,
			TotalEpsilon: cfg.Epsilon,
			TotalDelta:   cfg.Delta,
		}
		certs[i] = newCertificate(cals[i], sens[i], runs[i], SourceName(src), cfg.Notes, comp)
		certs[i].WeightsSHA256 = WeightsSHA256(out.W)
	}
	return outs, certs, nil
}
