package experiments

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/paper"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/experiments/protocol"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// ErrConfig is wrapped by every error about an invalid configuration.
var ErrConfig = errors.New("experiments: invalid config")

// Defaults of the sweeps.
var (
	// DefaultLambdas is the regularization grid of csv and in-memory data,
	// and Adult's (its registry entry has the same grid): 7 values
	// log-spaced from 1e-4 to 1e-2, a third of a decade apart, which
	// brackets the best lambda of every eps in 0.1..5 on Adult.
	DefaultLambdas = []float64{1e-4, 2.1544e-4, 4.6416e-4, 1e-3, 2.1544e-3, 4.6416e-3, 1e-2}
	// DefaultEpsilons are the privacy levels of the paper's figures.
	DefaultEpsilons = []float64{0.1, 0.5, 1, 2, 5}
)

// DefaultLambdasFor returns the default lambda grid of a data set: the
// grid of its entry in the registry of the paper's data sets
// (datasets/paper), or DefaultLambdas for csv and in-memory data. The
// sensitivity 2L/(mu n) grows as n shrinks, so the smaller data sets have
// larger lambdas: LastFM from 1e-4 to 1e-1, gene_all from 1e-3 to 1.
func DefaultLambdasFor(dataset string) []float64 {
	if entry, ok := paper.Lookup(dataset); ok && len(entry.Lambdas) > 0 {
		return entry.Lambdas
	}
	return slices.Clone(DefaultLambdas)
}

const (
	// DefaultSplits is the number of seeded 80/20 splits.
	DefaultSplits = 10
	// MaxSplits bounds the number of splits: results are held per split
	// and lambda.
	MaxSplits = 10_000
	// DefaultL1Ratio is the elastic net's L1 share of the paper.
	DefaultL1Ratio = 0.15
	// DefaultPasses is the number of SGD passes.
	DefaultPasses = 10
	// DefaultDelta is the delta of the Gaussian mechanisms.
	DefaultDelta = 1e-5
)

// grid is what Sweep and FeatSel share: the data, the (split, setting)
// grid and the training settings.
type grid struct {
	proto    *protocol.Protocol
	splits   int
	lambdas  []float64
	l1Ratio  float64
	passes   int
	knobs    Knobs
	settings []Setting
	// valFrac > 0 also trains every setting on the training part of a
	// selection.ValidationSplit of each split's training rows, for the
	// private selection.
	valFrac float64
	// sgd is false when no mechanism of the sweep perturbs trained
	// weights: the jobs then train nothing by SGD, and the settings are
	// the lambda family only. keepTrain keeps each split's training rows
	// in its fits, for the training-time mechanisms.
	sgd       bool
	keepTrain bool
	// keepPart keeps the training part of the validation split in the
	// lambda family's fits, for the training-time candidates of the
	// private selection.
	keepPart bool
	seed     uint64
	log      logrus.FieldLogger
}

// gridConfig holds the user's settings of the grid, before defaults.
type gridConfig struct {
	Protocol protocol.Config
	Splits   int
	Lambdas  []float64
	L1Ratio  float64
	Passes   int
	Knobs    Knobs
	ValFrac  float64
	// NoSGD skips the SGD runs (every mechanism is a training-time one);
	// KeepTrain keeps the training rows in the fits, KeepPart the
	// training part of the validation split in the lambda family's fits.
	NoSGD, KeepTrain, KeepPart bool
	Seed                       uint64
	Logger                     logrus.FieldLogger
}

// newGrid validates the settings, fills the defaults and loads the data.
func newGrid(c gridConfig) (*grid, error) {
	g := &grid{splits: c.Splits, lambdas: slices.Clone(c.Lambdas), l1Ratio: c.L1Ratio, passes: c.Passes, valFrac: c.ValFrac, sgd: !c.NoSGD, keepTrain: c.KeepTrain, keepPart: c.KeepPart, seed: c.Seed, log: c.Logger}
	if g.splits == 0 {
		g.splits = DefaultSplits
	}
	if len(g.lambdas) == 0 {
		g.lambdas = DefaultLambdasFor(c.Protocol.Dataset)
	}
	if g.l1Ratio == 0 {
		g.l1Ratio = DefaultL1Ratio
	}
	if g.passes == 0 {
		g.passes = DefaultPasses
	}
	if g.log == nil {
		l := logrus.New()
		l.SetOutput(discard{})
		g.log = l
	}
	if g.splits < 1 || g.splits > MaxSplits {
		return nil, fmt.Errorf("%w: splits = %d, want 1 to %d", ErrConfig, g.splits, MaxSplits)
	}
	if g.passes < 1 || g.passes > trainer.MaxPasses {
		return nil, fmt.Errorf("%w: passes = %d, want 1 to %d", ErrConfig, g.passes, trainer.MaxPasses)
	}
	if !(g.l1Ratio >= 0 && g.l1Ratio < 1) {
		return nil, fmt.Errorf("%w: l1 ratio %v, want in [0, 1) (the stability route needs mu = lambda(1 - l1 ratio) > 0)", ErrConfig, g.l1Ratio)
	}
	for _, l := range g.lambdas {
		if !check.Positive(l) {
			return nil, fmt.Errorf("%w: lambda %v, want finite > 0", ErrConfig, l)
		}
	}
	slices.Sort(g.lambdas)
	if len(slices.Compact(slices.Clone(g.lambdas))) != len(g.lambdas) {
		return nil, fmt.Errorf("%w: repeated lambda in %v", ErrConfig, g.lambdas)
	}
	var err error
	if g.knobs, err = c.Knobs.withDefaults(g.l1Ratio, g.passes); err != nil {
		return nil, err
	}
	g.settings = g.knobs.settings(g.lambdas)
	if !g.sgd {
		g.settings = slices.DeleteFunc(g.settings, func(s Setting) bool { return !s.InFamily(FamilyLambda) })
	}
	if len(g.settings) > MaxSettings {
		return nil, fmt.Errorf("%w: %d knob settings, want at most %d", ErrConfig, len(g.settings), MaxSettings)
	}
	if g.valFrac != 0 && !check.OpenUnit(g.valFrac) {
		return nil, fmt.Errorf("%w: validation fraction %v, want in (0, 1)", ErrConfig, g.valFrac)
	}
	start := time.Now()
	if g.proto, err = protocol.New(c.Protocol); err != nil {
		return nil, err
	}
	g.log.WithFields(logrus.Fields{"dataset": g.proto.Name(), "rows": g.proto.Rows(), "classes": g.proto.Classes(), "loss": g.proto.Loss().Name(),
		"took": time.Since(start).Round(time.Millisecond)}).Info("data loaded")
	return g, nil
}

// discard is an io.Writer that drops everything (a silent logger).
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// fit is one trained model of the grid: split s, setting index li.
type fit struct {
	split, li int
	lambda    float64
	setting   Setting
	// candidate holds the weights of the same setting trained on the
	// training part of the validation split (nil without a selection);
	// val is the validation part.
	candidate *release.Trained
	val       *datasets.Dataset
	// part is the training part of the validation split, kept in the
	// lambda family's fits for the training-time candidates (nil
	// otherwise).
	part *datasets.Dataset
	// trained holds the weights behind the privacy boundary; its releases
	// are seeded simulations. model is their revealed copy, the
	// non-private baseline of the experiments.
	trained *release.Trained
	model   *trainer.Model
	run     trainer.Run
	sens    perturb.Sensitivity
	test    *datasets.Dataset
	// train holds the split's training rows when the grid keeps them (for
	// the training-time mechanisms); the caller drops it after use.
	train *datasets.Dataset
	// accNonPrivate is the test accuracy of the trained (noise-free) model.
	accNonPrivate float64
	// majority is the share of the most frequent label among the test
	// rows (majorityShare).
	majority float64
}

// majorityShare returns the share of the most frequent label in y: the
// accuracy of always predicting the majority class of the rows y labels
// (0 for no rows). It is a statistic of the rows, for the experiments'
// figures and tables only: no private release publishes it.
func majorityShare(y []float64) float64 {
	if len(y) == 0 {
		return 0
	}
	count := map[float64]int{}
	most := 0
	for _, v := range y {
		count[v]++
		most = max(most, count[v])
	}
	return float64(most) / float64(len(y))
}

// splitData holds the preprocessed data of one split, computed by the first
// job that needs it and dropped after the last.
type splitData struct {
	once        sync.Once
	train, test *datasets.Dataset
	// fit and val are the parts of train for the private selection.
	fit, val *datasets.Dataset
	err      error
	mu       sync.Mutex
	left     int
}

// each trains every (split, setting) of the grid on a pool of
// runtime.GOMAXPROCS(0) workers and calls do on each fit, from the worker
// that trained it. The results of do are returned in (split, setting) order,
// whatever the order the jobs finished in, so a seeded run is reproducible.
// The first error stops the remaining jobs.
func each[R any](ctx context.Context, g *grid, do func(f *fit) ([]R, error)) ([]R, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	nl := len(g.settings)
	data := make([]*splitData, g.splits)
	for s := range data {
		data[s] = &splitData{left: nl}
	}
	out := make([][]R, g.splits*nl)
	jobs := make(chan int)
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel() })
	}
	workers := min(runtime.GOMAXPROCS(0), len(out))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				s, li := j/nl, j%nl
				f, err := g.train(ctx, data[s], s, li)
				var r []R
				if err == nil {
					r, err = do(f)
				}
				if err != nil {
					fail(fmt.Errorf("split %d, %s: %w", s, g.settings[li], err))
					continue
				}
				out[j] = r
			}
		}()
	}
	// Feed the jobs of `workers` splits interleaved, so that the workers
	// prepare different splits at the same time instead of waiting for one.
	order := make([]int, 0, len(out))
	for s0 := 0; s0 < g.splits; s0 += workers {
		for li := range nl {
			for s := s0; s < min(s0+workers, g.splits); s++ {
				order = append(order, s*nl+li)
			}
		}
	}
feed:
	for _, j := range order {
		select {
		case jobs <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var all []R
	for _, r := range out {
		all = append(all, r...)
	}
	return all, nil
}

// train prepares split s if needed (the first job of the split does it) and
// trains setting li on it.
func (g *grid) train(ctx context.Context, sd *splitData, s, li int) (*fit, error) {
	seed := g.seed + uint64(s)
	sd.once.Do(func() {
		start := time.Now()
		sd.train, sd.test, sd.err = g.proto.Split(seed)
		if sd.err == nil && g.valFrac > 0 {
			sd.fit, sd.val, sd.err = validationParts(sd.train, g.valFrac, seed)
		}
		if sd.err == nil {
			n, d := sd.train.X.Dims()
			g.log.WithFields(logrus.Fields{"split": s, "train": n, "test": len(sd.test.Y), "d": d,
				"took": time.Since(start).Round(time.Millisecond)}).Debug("split prepared")
		}
	})
	if sd.err != nil {
		return nil, sd.err
	}
	train, test, part, val := sd.train, sd.test, sd.fit, sd.val
	defer func() {
		sd.mu.Lock()
		if sd.left--; sd.left == 0 {
			sd.train, sd.fit = nil, nil // the test and validation sets live on in the fits that use them
		}
		sd.mu.Unlock()
	}()
	set := g.settings[li]
	var keptPart *datasets.Dataset
	if g.keepPart && set.InFamily(FamilyLambda) {
		keptPart = part
	}
	if !g.sgd {
		f := &fit{split: s, li: li, lambda: set.Lambda, setting: set, test: test, val: val, part: keptPart, majority: majorityShare(test.Y)}
		if g.keepTrain {
			f.train = train
		}
		return f, nil
	}
	cfg := set.config(g.proto, seed)
	trained, err := release.TrainRows(ctx, train.X, train.Y, cfg, train.Notes)
	if err != nil {
		return nil, err
	}
	var candidate *release.Trained
	if part != nil {
		if candidate, err = release.TrainRows(ctx, part.X, part.Y, cfg, part.Notes); err != nil {
			return nil, err
		}
	}
	sens, err := trained.Sensitivity()
	if err != nil {
		return nil, err
	}
	m, err := trained.Reveal()
	if err != nil {
		return nil, err
	}
	run := trained.Run()
	f := &fit{split: s, li: li, lambda: set.Lambda, setting: set, trained: trained, model: m, run: run, sens: sens, test: test,
		candidate: candidate, val: val, part: keptPart, accNonPrivate: m.Accuracy(test.X, test.Y), majority: majorityShare(test.Y)}
	if g.keepTrain {
		f.train = train
	}
	g.log.WithFields(logrus.Fields{"split": s, "setting": set.String(), "route": sens.Route, "Delta": sens.L2,
		"acc": fmt.Sprintf("%.4f", f.accNonPrivate), "took": run.Stats.Duration.Round(time.Millisecond)}).Debug("trained")
	return f, nil
}

// noiseSeed derives the seed of the noise of one release from the sweep's
// seed and the release's coordinates (splitmix64 finalizer), so that every
// release draws independent, reproducible noise whatever the job order.
func noiseSeed(seed uint64, parts ...int) uint64 {
	h := seed ^ 0x6a09e667f3bcc909
	for _, p := range parts {
		h += 0x9e3779b97f4a7c15 + uint64(p)
		h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9
		h = (h ^ (h >> 27)) * 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}

// release releases f's weights at (eps, delta) with seeded noise
// (release.Trained.Simulate). Each call is a separate release with its own
// certificate, which says it is not private: the sweep reports one accuracy
// per eps, never a composition of the releases (each stands alone, as if it
// were the only one).
func releaseFit(f *fit, mech dp.Mechanism, eps, delta float64, seed uint64) (*trainer.Model, *release.Certificate, error) {
	return f.trained.Simulate(mech, eps, delta, seed)
}
