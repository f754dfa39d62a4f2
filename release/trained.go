package release

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// Trained holds the non-private weights of a training run behind the
// privacy boundary: they never leave it except through a release. A
// Trained value is a handle; copies share one state, so the weights are
// released at most once whoever holds a copy, and Release wipes them.
type Trained struct {
	s *trainedState
}

type trainedState struct {
	mu       sync.Mutex
	hold     *Hold          // the selection holding the weights, nil for none
	model    *trainer.Model // nil once released
	revealed bool           // the weights were handed out in the clear
	run      *trainer.Run
	report   *stability.Report
	sens     perturb.Sensitivity
	notes    []string
	err      error // why no route applies, nil when sens is set
}

// TrainRows trains with cfg on rows X (each of norm at most cfg.Kappa after
// the trainer's clipping) and labels y, and analyzes the run's stability.
// notes are what the release's certificate must list as not covered by its
// claim about these rows (for example how the rows were preprocessed). It
// is the step of Fit after the preprocessing, for callers that prepare the
// rows themselves (the paper's experiments); the claim of a release is then
// about the rows X as given. cfg.Logger, when set, receives the warning of
// DropoutWarning.
func TrainRows(ctx context.Context, X mat.Matrix, y []float64, cfg trainer.Config, notes []string) (*Trained, error) {
	tr, err := trainer.New(cfg)
	if err != nil {
		return nil, err
	}
	if w := DropoutWarning(cfg); w != "" && cfg.Logger != nil {
		cfg.Logger.Warn(w)
	}
	m, run, err := tr.Train(ctx, X, y)
	if err != nil {
		return nil, err
	}
	return NewTrained(m, run, notes)
}

// DropoutWarning returns a warning when the s-dropout of cfg does not
// lower the sensitivity of its run: with per-example clipping to G <= s L
// (one output; L = L_z kappa, the loss's Lipschitz constant on rows of norm
// kappa), G bounds every gradient a step uses whatever s, so the stability
// routes' Lipschitz constant is G (stability.Effective: min(G, s L)) and s
// only lowers the smoothness. It returns "" otherwise: no dropout, no
// clipping, G above s L (s then lowers it), K > 1 outputs (whose clipping
// the routes refuse instead), or a loss without constants. It reads the
// settings alone, so a fit may say it before it trains.
func DropoutWarning(cfg trainer.Config) string {
	s, kappa := cfg.Dropout, cfg.Kappa
	if kappa == 0 {
		kappa = 1
	}
	if s == 0 || s >= 1 || cfg.Clip <= 0 || cfg.Loss == nil || cfg.Loss.Outputs(cfg.Classes) != 1 {
		return ""
	}
	cons, err := cfg.Loss.Constants(losses.Domain{Kappa: kappa, Radius: cfg.Radius, LabelBound: cfg.LabelBound})
	if err != nil || cfg.Clip > s*cons.Lz*kappa {
		return ""
	}
	return fmt.Sprintf("dropout s = %g does not lower Delta: clipping to G = %g <= s*L = %.3g bounds the gradients; raise G or drop s", s, cfg.Clip, s*cons.Lz*kappa)
}

// NewTrained analyzes the stability of the run that made the weights m and
// returns them behind the privacy boundary, as TrainRows does: for weights
// made by a procedure whose sensitivity is that of run (the weighted average
// of a partitioned fit, whose run record is the reference run and whose
// partitioned sensitivity its caller has checked against it). m is not
// copied: the handle owns it.
func NewTrained(m *trainer.Model, run *trainer.Run, notes []string) (*Trained, error) {
	rep, err := stability.Analyze(run)
	if err != nil {
		return nil, err
	}
	st := &trainedState{model: m, run: run, report: rep}
	sens, assumptions, err := FromReport(rep)
	if err != nil {
		st.err = err
	} else {
		st.sens = sens
		st.notes = append(slices.Clone(notes), assumptions...)
	}
	return &Trained{s: st}, nil
}

// errZero is the error of a method of a zero (or nil) Trained value.
var errZero = fmt.Errorf("%w: a zero Trained value (use TrainRows or NewTrained)", ErrConfig)

// state returns t's state, or an error wrapping ErrConfig for a zero (or
// nil) Trained value, which holds no weights.
func (t *Trained) state() (*trainedState, error) {
	if t == nil || t.s == nil {
		return nil, errZero
	}
	return t.s, nil
}

// NewTrainedWith is NewTrained for weights m made by a procedure whose
// sensitivity is not the run's own but sens, which the caller derived from
// the run's public constants (the weighted average of a partitioned fit:
// stability.AnalyzePartitioned); notes are all the not-covered notes of the
// release, the bound's included. The run's own analysis is still reported
// (Report). A sens that does not validate is an error.
func NewTrainedWith(m *trainer.Model, run *trainer.Run, sens perturb.Sensitivity, notes []string) (*Trained, error) {
	if err := sens.Validate(); err != nil {
		return nil, err
	}
	rep, err := stability.Analyze(run)
	if err != nil {
		return nil, err
	}
	st := &trainedState{model: m, run: run, report: rep, sens: sens, notes: slices.Clone(notes)}
	return &Trained{s: st}, nil
}

// Run returns a copy of the run record: the constants of the run, and in
// Stats the statistics of the data (not to be published). A zero Trained
// value has none: its Run is the zero trainer.Run.
func (t *Trained) Run() trainer.Run {
	if _, err := t.state(); err != nil {
		return trainer.Run{}
	}
	r := *t.s.run
	r.PassMaxStep, r.PassMinStep = slices.Clone(r.PassMaxStep), slices.Clone(r.PassMinStep)
	return r
}

// Report returns the stability analysis of the run. It is computed from the
// constants of the run alone and may be published. It is nil for a zero
// Trained value.
func (t *Trained) Report() *stability.Report {
	if _, err := t.state(); err != nil {
		return nil
	}
	return t.s.report
}

// Sensitivity returns the L2 sensitivity of the chosen route, or the error
// saying why no route applies (wrapping ErrConfig for a zero Trained value).
func (t *Trained) Sensitivity() (perturb.Sensitivity, error) {
	s, err := t.state()
	if err != nil {
		return perturb.Sensitivity{}, err
	}
	return s.sens, s.err
}

// lock returns t's state locked (the caller unlocks it), or the error of
// a zero Trained value, or ErrHeld (unlocked) while a selection holds the
// weights.
func (t *Trained) lock() (*trainedState, error) {
	s, err := t.state()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.hold != nil {
		s.mu.Unlock()
		return nil, ErrHeld
	}
	return s, nil
}

// Release adds the noise of mech, calibrated to (eps, delta) and the
// sensitivity of the chosen stability route, to the trained weights, and
// returns the released model and its certificate (Weights). src nil
// means perturb.Secure(); only a secure release is private.
//
// The weights are released once: Release wipes them from every copy of t,
// and a second call returns an error wrapping ErrReleased. It also fails,
// releasing nothing and keeping the weights, when no route applies or the
// privacy parameters are invalid, and after Reveal or Simulate (whose
// published seed gives the weights back): a release of revealed weights
// would protect nothing. Release, Simulate and Reveal of a zero
// Trained value return an error wrapping ErrConfig.
func (t *Trained) Release(mech dp.Mechanism, eps, delta float64, src perturb.Source, extraNotes ...string) (*trainer.Model, *Certificate, error) {
	s, err := t.lock()
	if err != nil {
		return nil, nil, err
	}
	defer s.mu.Unlock()
	if s.model == nil {
		return nil, nil, fmt.Errorf("%w: a second release of the same weights needs its own budget and is refused", ErrReleased)
	}
	if s.revealed {
		return nil, nil, fmt.Errorf("%w: the weights were revealed (Reveal, or Simulate's published seed): a release would protect nothing", ErrReleased)
	}
	out, cert, err := s.release(s.model, mech, eps, delta, src, extraNotes)
	if err != nil {
		return nil, nil, err
	}
	for i := range s.model.W {
		s.model.W[i] = 0
	}
	s.model = nil
	return out, cert, nil
}

// Simulate releases a copy of the trained weights with seeded noise: a
// reproducible stand-in for Release in experiments that measure the
// accuracy of many releases of one training run. Its certificate says that
// the release is not private (the seed is published). Anyone who knows the
// seed can subtract the noise, so Simulate reveals the weights as Reveal
// does: Release is refused from then on. It fails after Release.
func (t *Trained) Simulate(mech dp.Mechanism, eps, delta float64, noiseSeed uint64, extraNotes ...string) (*trainer.Model, *Certificate, error) {
	s, err := t.lock()
	if err != nil {
		return nil, nil, err
	}
	defer s.mu.Unlock()
	if s.model == nil {
		return nil, nil, fmt.Errorf("%w: the weights were released and wiped", ErrReleased)
	}
	cp := *s.model
	cp.W = slices.Clone(s.model.W)
	out, cert, err := s.release(&cp, mech, eps, delta, perturb.Seeded(noiseSeed), extraNotes)
	if err != nil {
		return nil, nil, err
	}
	s.revealed = true
	return out, cert, nil
}

func (s *trainedState) release(m *trainer.Model, mech dp.Mechanism, eps, delta float64, src perturb.Source, extra []string) (*trainer.Model, *Certificate, error) {
	if s.err != nil {
		return nil, nil, s.err
	}
	notes := append(slices.Clone(s.notes), extra...)
	return Weights(m, s.run, s.sens, Config{Mechanism: mech, Epsilon: eps, Delta: delta, Source: src, Notes: notes})
}

// Reveal returns a copy of the trained weights in the clear, for a
// non-private fit or a non-private baseline in an experiment. From then on
// Release is refused (the weights are no longer secret); Simulate still
// works.
func (t *Trained) Reveal() (*trainer.Model, error) {
	s, err := t.lock()
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if s.model == nil {
		return nil, fmt.Errorf("%w: the weights were released and wiped", ErrReleased)
	}
	s.revealed = true
	cp := *s.model
	cp.W = slices.Clone(s.model.W)
	return &cp, nil
}

// metric evaluates the trained (non-private) weights with f, for
// diagnostics; it fails after a release.
func (t *Trained) metric(f func(*trainer.Model) float64) (float64, bool) {
	s, err := t.state()
	if err != nil {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.model == nil || s.hold != nil {
		return 0, false
	}
	return f(s.model), true
}
