package experiments

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/experiments/protocol"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
)

// Modes of a Result.
const (
	// Calibrated rows release at a target eps, with the noise calibrated to
	// the sensitivity of the run (Figure 1).
	Calibrated = "calibrated"
	// FixedScale rows release with a fixed noise scale and report the eps
	// that the run's sensitivity buys at it (Figure 2, the paper's
	// Corollary 13).
	FixedScale = "fixed-scale"
)

// SweepConfig sets up Sweep. Every zero value is documented.
type SweepConfig struct {
	// Protocol selects the data set and the preprocessing. Required.
	Protocol protocol.Config
	// Splits is the number of seeded 80/20 splits; split s uses seed
	// Seed+s for the split, the SVD and the SGD permutations. Zero means 10.
	Splits int
	// Lambdas is the elastic-net strength grid. Nil means
	// DefaultLambdasFor(Protocol.Dataset).
	Lambdas []float64
	// Epsilons are the privacy levels of the calibrated releases. Nil means
	// DefaultEpsilons.
	Epsilons []float64
	// Mechanism is the output-perturbation mechanism. The zero value means
	// perturb.Gamma (pure eps-DP with the L2 sensitivity).
	Mechanism dp.Mechanism
	// Mechanisms, when set, replaces Mechanism by a list: every trained
	// model is released with each (pure and (eps, delta) mechanisms side
	// by side, on the same training runs). Repeated names are an error.
	Mechanisms []dp.Mechanism
	// Knobs are the stability knobs tuned besides lambda (nil lists: one
	// value each). The grid is every lambda with every combination.
	Knobs Knobs
	// Select sets up the private selection (SelectConfig); the zero value
	// skips it.
	Select SelectConfig
	// Delta is the delta of the Gaussian mechanisms, in (0, 1). Zero means
	// DefaultDelta. The pure mechanisms ignore it (delta = 0).
	Delta float64
	// L1Ratio is the elastic net's L1 share alpha, in (0, 1). Zero means
	// 0.15.
	L1Ratio float64
	// Passes is the number of SGD passes. Zero means 10.
	Passes int
	// Seed is the base seed of the splits, the training and the noise.
	Seed uint64
	// FixedScale is the noise scale b of the Figure 2 releases (the scale
	// named by Mechanism.ScaleName: b, theta or sigma). Zero means the
	// scale that eps = 1 calibrates at the middle lambda of the grid (on
	// split 0; the sensitivity depends on n and lambda, not on the data
	// values); a negative value skips Figure 2.
	FixedScale float64
	// Logger receives progress at Info level. Nil means silent.
	Logger logrus.FieldLogger
}

// SelectConfig sets up the private selection of a sweep
// (selection.Select): for every split and eps, the candidates are every knob
// setting with every pure output-perturbation mechanism of the sweep,
// trained on the training part of a validation split of the split's
// training rows, and, when objective is among the mechanisms, objective
// perturbation at every lambda of the grid on the same training part (a
// lambda below the floor at eps_run runs at the floor, once); the
// selection spends the whole eps (its ledger: eps_select + eps_release).
type SelectConfig struct {
	// ValFrac in (0, 1) is the share of each split's training rows held
	// out for validation, by position. Zero skips the selection. A
	// selection needs a pure mechanism (gamma, laplace or objective) among
	// the sweep's: selection.Select accounts for pure runs, so amp and the
	// Gaussian mechanisms are not candidates.
	ValFrac float64
	// Eta in [0, 1] and MeanRuns are selection.SelectOptions'.
	Eta      float64
	MeanRuns float64
}

// Modes of a Result besides Calibrated and FixedScale.
const (
	// Selected rows are the privately selected releases: one per split and
	// eps, its setting and mechanism chosen by selection.Select.
	Selected = "selected"
)

// Result is one release of a sweep: one row of results.csv.
type Result struct {
	Dataset string `json:"dataset"`
	// DataFile is the base name of the CSV file of the csv data set ("" for
	// the other data sets); the figures' titles name it.
	DataFile string `json:"data_file,omitempty"`
	// Mode is Calibrated, FixedScale or Selected.
	Mode   string  `json:"mode"`
	Split  int     `json:"split"`
	Lambda float64 `json:"lambda"`
	// Setting holds lambda and every knob of the run (Lambda repeats it).
	Setting Setting `json:"setting"`
	// EpsSelect and EpsRelease are the two parts of a Selected row's
	// ledger (zero for the other modes).
	EpsSelect  float64 `json:"eps_select,omitempty"`
	EpsRelease float64 `json:"eps_release,omitempty"`
	// Epsilon and PrivacyDelta are the certified (eps, delta) of the
	// release: the target for Calibrated rows, the eps bought by the fixed
	// scale for FixedScale rows.
	Epsilon      float64 `json:"epsilon"`
	PrivacyDelta float64 `json:"privacy_delta"`
	Mechanism    string  `json:"mechanism"`
	// Route is the stability route that gave Sensitivity (the L2
	// sensitivity Delta of the weights); Beta is the uniform stability.
	Route       string  `json:"route"`
	Sensitivity float64 `json:"sensitivity"`
	Beta        float64 `json:"beta"`
	// NoiseScale is the mechanism's scale, named by NoiseScaleName.
	NoiseScaleName string  `json:"noise_scale_name"`
	NoiseScale     float64 `json:"noise_scale"`
	// AccPrivate and AccNonPrivate are the test accuracies of the released
	// and of the trained (noise-free) weights.
	AccPrivate    float64 `json:"acc_private"`
	AccNonPrivate float64 `json:"acc_nonprivate"`
	// Majority is the accuracy of always predicting the majority class of
	// the split's test rows (the share of its most frequent label), the
	// floor a useful classifier must beat. It is a statistic of the test
	// rows, reported by the experiments on public benchmark data; no
	// private release publishes it. Zero means not recorded.
	Majority float64 `json:"majority,omitempty"`
	// TrainTime is the time of the training run (shared by the releases of
	// one (split, lambda)).
	TrainTime time.Duration `json:"train_time_ns"`
	// NoiseSource is the certificate's noise source: seeded, not for release.
	NoiseSource string `json:"noise_source"`
}

// sweepSettings are the checked settings of a sweep.
type sweepSettings struct {
	epsilons []float64
	mech     dp.Mechanism
	mechs    []dp.Mechanism
	delta    float64
	scale    float64
	// fixedMech is the first output-perturbation mechanism of mechs, the
	// one of the fixed-scale releases ("" when every mechanism is a
	// training-time one: no fixed-scale releases).
	fixedMech dp.Mechanism
}

// trainingTime reports whether m has no output-perturbation noise (the
// training-time mechanisms of package objpert): its noise enters the
// objective, so it trains per (split, lambda, eps) instead of releasing a
// trained model at every eps.
func trainingTime(m dp.Mechanism) bool {
	_, err := perturb.Lookup(m)
	return err != nil
}

// outputs reports whether some mechanism of the sweep perturbs trained
// weights (and so needs the SGD runs of the grid).
func (s sweepSettings) outputs() bool { return s.fixedMech != "" }

// deltaOf returns the delta of mechanism m: 0 for a pure one.
func (s sweepSettings) deltaOf(m dp.Mechanism) float64 {
	if m.Pure() {
		return 0
	}
	return s.delta
}

func checkSweep(cfg SweepConfig) (sweepSettings, error) {
	s := sweepSettings{epsilons: slices.Clone(cfg.Epsilons), mech: cfg.Mechanism, mechs: slices.Clone(cfg.Mechanisms), delta: cfg.Delta, scale: cfg.FixedScale}
	if len(s.epsilons) == 0 {
		s.epsilons = slices.Clone(DefaultEpsilons)
	}
	if len(s.mechs) == 0 {
		if s.mech == "" {
			s.mech = perturb.Gamma
		}
		s.mechs = []dp.Mechanism{s.mech}
	}
	s.mech = s.mechs[0]
	if err := distinct("mechanism", s.mechs); err != nil {
		return s, err
	}
	pure := true
	for _, m := range s.mechs {
		if _, err := perturb.ParseMechanism(string(m)); err != nil {
			return s, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		pure = pure && m.Pure()
		if s.fixedMech == "" && !trainingTime(m) {
			s.fixedMech = m
		}
	}
	if pure {
		s.delta = 0
	} else if s.delta == 0 {
		s.delta = DefaultDelta
	}
	if sc := cfg.Select; sc.ValFrac != 0 {
		if !slices.ContainsFunc(s.mechs, selectable) {
			return s, fmt.Errorf("%w: the private selection needs a pure mechanism (gamma, laplace or objective) among %v", ErrConfig, s.mechs)
		}
		if !(sc.Eta >= 0 && sc.Eta <= 1) || !(sc.MeanRuns == 0 || sc.MeanRuns > 1 && sc.MeanRuns <= 1e6) {
			return s, fmt.Errorf("%w: selection eta %v (want [0, 1]) or mean runs %v (want 0 or (1, 1e6])", ErrConfig, sc.Eta, sc.MeanRuns)
		}
	}
	if !check.Finite(s.scale) {
		return s, fmt.Errorf("%w: fixed scale %v, want finite", ErrConfig, s.scale)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(s.epsilons)))) != len(s.epsilons) {
		return s, fmt.Errorf("%w: repeated epsilon in %v (the summary would pool its releases)", ErrConfig, s.epsilons)
	}
	for _, e := range s.epsilons {
		// Calibrate checks (eps, delta) for the mechanism, with a dummy
		// sensitivity, so that a bad setting fails before any training.
		for _, m := range s.mechs {
			method, err := release.Lookup(m)
			if err == nil {
				err = method.CheckBudget(dp.Budget{Epsilon: e, Delta: s.deltaOf(m)})
			}
			if err != nil {
				return s, fmt.Errorf("%w: %w", ErrConfig, err)
			}
		}
	}
	return s, nil
}

// Sweep runs the paper's Figure 1 and Figure 2 experiments: for every split
// and lambda it trains once (permutation SGD with the bounded 1/(mu t)
// schedule, min(1/beta, 1/(mu t)), so that the strongly convex SGD route
// gives Delta <= 2L/(mu n) without a convergence condition), computes the
// sensitivity with stability.Analyze, and releases the weights once per eps
// with noise calibrated to it (Calibrated rows), then once at the fixed
// noise scale (FixedScale rows, unless disabled). Every release is a
// separate release of the same trained weights with its own certificate;
// the accuracies are those of alternative releases, not of a composition.
//
// The noise is seeded (perturb.Seeded, one seed per release derived from
// cfg.Seed): the rows are reproducible and not for release. Training runs
// on runtime.GOMAXPROCS(0) workers; the rows come in (split, lambda, eps)
// order whatever the scheduling. Errors wrap ErrConfig, ErrNoData, or the
// error of a loader, the trainer, the stability analysis or a release.
func Sweep(ctx context.Context, cfg SweepConfig) ([]Result, error) {
	set, err := checkSweep(cfg)
	if err != nil {
		return nil, err
	}
	g, err := newGrid(gridConfig{Protocol: cfg.Protocol, Splits: cfg.Splits, Lambdas: cfg.Lambdas, L1Ratio: cfg.L1Ratio,
		Passes: cfg.Passes, Knobs: cfg.Knobs, ValFrac: cfg.Select.ValFrac, NoSGD: !set.outputs(),
		KeepTrain: slices.ContainsFunc(set.mechs, trainingTime), KeepPart: slices.Contains(set.mechs, perturb.Objective),
		Seed: cfg.Seed, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	type kept struct {
		f    *fit
		rows []Result
	}
	fits, err := each(ctx, g, func(f *fit) ([]kept, error) {
		defer func() { f.train = nil }()
		rows := make([]Result, 0, len(set.epsilons)*len(set.mechs))
		nonPrivate := map[float64]float64{}
		for mi, mech := range set.mechs {
			if trainingTime(mech) && !f.setting.InFamily(FamilyLambda) {
				continue // the knobs do not apply: once per (split, lambda)
			}
			for ei, eps := range set.epsilons {
				// The first mechanism keeps the seeds of a sweep with one.
				seed := noiseSeed(g.seed, f.split, f.li, ei)
				if mi > 0 {
					seed = noiseSeed(g.seed, f.split, f.li, ei, mi)
				}
				if trainingTime(mech) {
					r, ok, err := g.objectiveRow(ctx, f, mech, eps, set.deltaOf(mech), seed, nonPrivate)
					if err != nil {
						return nil, err
					}
					if ok {
						rows = append(rows, r)
					}
					continue
				}
				r, err := g.releaseRow(f, mech, eps, set.deltaOf(mech), seed)
				if err != nil {
					return nil, err
				}
				rows = append(rows, r)
			}
		}
		return []kept{{f, rows}}, nil
	})
	if err != nil {
		return nil, err
	}
	var out []Result
	for _, k := range fits {
		out = append(out, k.rows...)
	}
	if g.valFrac > 0 {
		fs := make([]*fit, len(fits))
		for i, k := range fits {
			fs[i] = k.f
		}
		sel, err := g.selectRows(ctx, fs, set, cfg.Select)
		if err != nil {
			return nil, err
		}
		out = append(out, sel...)
	}
	if set.scale >= 0 && set.outputs() {
		b := set.scale
		if b == 0 {
			// The fits of split 0 come first, in increasing lambda, the
			// baseline knobs first.
			if b, err = calibratedScale(fits[len(g.lambdas)/2].f, set.fixedMech, set.deltaOf(set.fixedMech)); err != nil {
				return nil, err
			}
		}
		for _, k := range fits {
			if !k.f.setting.InFamily(FamilyLambda) {
				continue
			}
			r, err := g.fixedRow(k.f, set.fixedMech, b, set.deltaOf(set.fixedMech))
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		g.log.WithFields(logrus.Fields{"scale": b, "name": set.fixedMech.ScaleName()}).Info("fixed-scale releases done")
	}
	g.log.WithFields(logrus.Fields{"rows": len(out), "took": time.Since(start).Round(time.Millisecond)}).Info("sweep done")
	return out, nil
}

// calibratedScale returns the noise scale that eps = 1 calibrates for f.
func calibratedScale(f *fit, mech dp.Mechanism, delta float64) (float64, error) {
	cal, err := perturb.Calibrate(mech, 1, delta, f.sens, f.model.K*f.model.D)
	if err != nil {
		return 0, err
	}
	return cal.Scale, nil
}

// releaseRow releases f at (eps, delta) and measures the test accuracy.
func (g *grid) releaseRow(f *fit, mech dp.Mechanism, eps, delta float64, seed uint64) (Result, error) {
	m, cert, err := releaseFit(f, mech, eps, delta, seed)
	if err != nil {
		return Result{}, err
	}
	return Result{
		Dataset: g.proto.Name(), DataFile: g.proto.DataFile(), Mode: Calibrated, Split: f.split, Lambda: f.lambda, Setting: f.setting,
		Epsilon: cert.Epsilon, PrivacyDelta: cert.Delta, Mechanism: string(cert.Mechanism),
		Route: f.sens.Route, Sensitivity: f.sens.L2, Beta: f.sens.Beta,
		NoiseScaleName: cert.NoiseScaleName, NoiseScale: cert.NoiseScale,
		AccPrivate: m.Accuracy(f.test.X, f.test.Y), AccNonPrivate: f.accNonPrivate, Majority: f.majority,
		TrainTime: f.run.Stats.Duration, NoiseSource: cert.Source,
	}, nil
}

// fixedRow releases f with the noise scale b: it computes the eps that b
// buys for f's sensitivity (perturb.EpsilonForScale; for Laplace the L1
// sensitivity) and releases at that eps, whose calibration gives back b.
func (g *grid) fixedRow(f *fit, mech dp.Mechanism, b, delta float64) (Result, error) {
	cal, err := perturb.Calibrate(mech, 1, delta, f.sens, f.model.K*f.model.D)
	if err != nil {
		return Result{}, err
	}
	sens := cal.L2
	if mech == perturb.Laplace {
		sens = cal.L1
	}
	eps, err := perturb.EpsilonForScale(mech, b, sens, delta)
	if err != nil {
		return Result{}, err
	}
	r, err := g.releaseRow(f, mech, eps, delta, noiseSeed(g.seed, f.split, f.li, -1))
	r.Mode = FixedScale
	return r, err
}

// ExperimentNotes are the notes shared by every sweep's outputs.
var ExperimentNotes = []string{
	"noise drawn from seeded sources (perturb.Seeded): reproducible, not for release",
	"each eps is a separate release with its own certificate (of the same trained weights for output perturbation); the rows compare alternative releases, not a composition",
	"the best lambda per eps is chosen on the test accuracy, as in the paper's tables: optimistic, and the choice itself is not private",
	"output-perturbation rows: permutation SGD, step min(1/beta, 1/(mu t)), sensitivity by the strongly convex SGD route, Delta <= 2L/(mu n); objective and amp rows: the ridge objective with its linear noise minimized exactly (objpert), no SGD and no stability route",
}
