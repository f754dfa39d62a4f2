package release

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// ErrConfig is wrapped by every error about settings a method does not
// certify.
var ErrConfig = errors.New("release: settings the method does not certify")

// Method is one way to release the weights of a linear model privately,
// named by its mechanism: output perturbation of an SGD run (one Method per
// noise of package perturb), objective perturbation and AMP (package
// objpert), the decision stump. The certified pipeline, partitioned
// training, model selection and the verification of model files reach
// every mechanism through the registry (Lookup); none of them branches on a
// family of mechanisms.
//
// A method has three roles, each an interface of its own, as gonum's
// optimize splits a Method from its Settings and Recorder: Method draws (the
// checks a fit makes before it reads a row, and Prepare, the first step of
// a release), Tuner chooses the knobs from public values, Verifier rebuilds
// and checks what a release published. Every registered method has the
// three; LookupTuner and LookupVerifier find the other two by name.
//
// A release has two steps: Prepare does the work on the rows that precedes
// the noise (for output perturbation: training and the stability analysis;
// for objective perturbation: the checks and the calibration), and the
// Prepared value's Release draws the noise and returns the released
// weights with their certificate. Whether the method is pure eps-DP is its
// name's (Name().Pure()).
type Method interface {
	// Name is the mechanism's name, as certificates, model files and the
	// command line carry it.
	Name() dp.Mechanism
	// SGD reports whether the method releases the weights of an SGD run
	// of package trainer (output perturbation): the SGD knobs of
	// trainer.Config (passes, batch, step and schedule, engine, clipping,
	// dropout, projection, averaging, an L1 term) then shape the run it
	// releases, Trained.Prepared takes its name, and a partitioned fit
	// (package partition) can release the average of the partitions'
	// runs with it. A method that minimizes an objective of its own
	// (objective perturbation, AMP) returns false: the SGD knobs do not
	// apply to it, and its CheckConfig refuses those that would change
	// its objective.
	SGD() bool
	// CheckBudget returns an error wrapping dp.ErrBudget if the method
	// cannot spend b: b.Validate's range first, then the method's own
	// conditions.
	CheckBudget(b dp.Budget) error
	// CheckConfig returns an error wrapping ErrConfig for training
	// settings the method does not certify. It reads no rows, so a fit
	// refuses such settings before reading any.
	CheckConfig(cfg trainer.Config) error
	// Prepare does the work on the rows that precedes the noise of a
	// release at budget b. Its result holds non-private state (for output
	// perturbation, the trained weights) behind the privacy boundary.
	Prepare(ctx context.Context, rows Rows, b dp.Budget) (Prepared, error)
}

// Knob names one of the SGD knobs of trainer.Config by the command line's
// flag for it.
type Knob string

// The SGD knobs a method that releases no SGD run may still take
// (KnobTaker).
const (
	KnobPasses   Knob = "passes"   // Config.Passes
	KnobBatch    Knob = "batch"    // Config.Batch
	KnobStep     Knob = "step"     // Config.Eta
	KnobSchedule Knob = "schedule" // Config.Schedule
	KnobClip     Knob = "clip"     // Config.Clip
	KnobAverage  Knob = "average"  // Config.Average
)

// KnobTaker is the optional interface of a method that releases no SGD run
// (Method.SGD is false: no stability route, no partitioned fit) but whose
// own run some SGD knobs of trainer.Config shape: DP-SGD's expected batch,
// passes, step, schedule, clipping norm and averaging. Its Tuner's Auto
// sets all of them; a caller that takes a user's value of one of them
// uses the user's knobs, not Auto.
type KnobTaker interface {
	// Knobs returns the SGD knobs that shape the method's run.
	Knobs() []Knob
}

// TakenKnobs returns the SGD knobs that shape the run of m when m releases
// no SGD run (KnobTaker), nil for a method that takes none; a method that
// releases an SGD run (Method.SGD) takes every SGD knob, and TakenKnobs
// returns nil for it too.
func TakenKnobs(m Method) []Knob {
	if kt, ok := m.(KnobTaker); ok && !m.SGD() {
		return slices.Clone(kt.Knobs())
	}
	return nil
}

// TakesKnob reports whether the SGD knob k shapes the run of m: every knob
// for a method that releases an SGD run, those of TakenKnobs otherwise.
func TakesKnob(m Method, k Knob) bool { return m.SGD() || slices.Contains(TakenKnobs(m), k) }

// Tuner chooses a method's knobs from public values alone: it reads no
// rows and costs no privacy.
type Tuner interface {
	// Auto returns cfg with the method's automatic knobs for n training
	// rows of dim model inputs and the budget b, chosen from those public
	// values (and the loss and number of classes in cfg) alone, and a
	// sentence stating the rule.
	Auto(cfg trainer.Config, n, dim int, b dp.Budget) (trainer.Config, string, error)
	// AutoScaled is Auto with lambda multiplied by scale > 0, then raised
	// to the smallest lambda the method certifies at b, if any (objective
	// perturbation's floor): the candidates of a private selection
	// (package selection) are settings of this form. AutoScaled(..., 1) is
	// Auto.
	AutoScaled(cfg trainer.Config, n, dim int, b dp.Budget, scale float64) (trainer.Config, string, error)
	// NoiseRatio returns the expected norm of the noise's effect on the
	// weights over the bound on the norm of the noiseless weights, for n
	// training rows of dim inputs with the loss and classes of cfg and the
	// method's automatic knobs at budget b: public values only, and the
	// same for every lambda (package release/forecast).
	NoiseRatio(cfg trainer.Config, n, dim int, b dp.Budget) (float64, error)
}

// Verifier rebuilds and checks what a release of a method published, for
// the verification of model files.
type Verifier interface {
	// Rebuild returns the certificate (without the weights' hash) and the
	// stability analysis (nil for a method without one) that a release
	// with the published constants of c carries, with pub's notes; a
	// verifier compares them with a file's. It checks the published run
	// constants the method derives (loss constants, the steps of every
	// pass, ...) and returns an error naming what is inconsistent.
	Rebuild(c *Certificate, pub Public) (*Certificate, *stability.Report, error)
	// CheckWeights returns an error when w cannot be the release that a
	// certificate c, as Rebuild gives it, states: coordinates off the
	// lattice the secure sampler rounds to (for the secure source), or a
	// norm above the bound on the trained weights plus a norm the noise
	// exceeds with probability at most 2^-63 (a genuine release is refused
	// with at most that probability).
	CheckWeights(c *Certificate, pub Public, w []float64) error
}

// registered is what the registry holds: a method in its three roles.
type registered interface {
	Method
	Tuner
	Verifier
}

// Rows are the training rows a method receives, with the settings of the
// run.
type Rows struct {
	// X holds the rows, each of norm at most Config.Kappa (1 when zero),
	// and Y their labels.
	X *mat.Dense
	Y []float64
	// Config holds the loss, the number of classes, kappa, the knobs and
	// the seed. The trainer's logger in it receives the progress of a run,
	// which is a statistic of the data.
	Config trainer.Config
	// Notes are what the certificate must list as not covered by the claim
	// about these rows (how they were prepared, for example).
	Notes []string
}

// Public are the published inputs of a release that Rebuild needs beside
// its certificate.
type Public struct {
	// Classes is the number of declared classes (0 for regression), K the
	// number of outputs and D the number of inputs of the released model.
	Classes, K, D int
	// Notes are the notes the release was prepared with (Rows.Notes), and
	// Extra the notes it was released with (Prepared.Release's extra).
	Notes, Extra []string
	// Auto reports that the knobs were chosen by the method's Auto: Rebuild
	// then requires the run's knobs to be Auto's for the published n, d,
	// K and budget (AutoScaled's with AutoScale when it is not 0).
	Auto bool
	// AutoScale is the factor on the automatic lambda (AutoScaled) of a
	// release whose setting a private selection chose; 0 means 1.
	AutoScale float64
	// Sensitivity, when not nil, is the sensitivity an output-perturbation
	// release was calibrated to instead of the run's own, with
	// SensitivityNotes in place of the route's notes (NewTrainedWith: a
	// partitioned fit, whose bound its caller recomputes from the published
	// constants).
	Sensitivity      *perturb.Sensitivity
	SensitivityNotes []string
}

// Prepared is a release in waiting: the state Prepare made from the rows
// and a budget. The state is not private; it leaves only through Release.
type Prepared interface {
	// Mechanism names the release's method.
	Mechanism() dp.Mechanism
	// Budget is the budget the release was prepared for.
	Budget() dp.Budget
	// Shape returns the number of outputs K and of inputs D of the
	// weights the release makes.
	Shape() (k, d int)
	// Describe says in words how the release makes its weights.
	Describe() string
	// Release draws the noise from src (nil means perturb.Secure()) and
	// returns the released weights, their certificate (with the ledger
	// of the release's charges on Budget, which a caller that owns a
	// larger budget takes from its own ledger: the package's doc,
	// "Ledgers"; Neighbouring replace-one on the rows, extra appended to the
	// not-covered notes, and the noise seed of a seeded source) and the
	// run's statistics, which are not private. It may be called once: the
	// trained weights are used up.
	Release(ctx context.Context, src perturb.Source, extra ...string) (*Outcome, error)
	// Stability is the stability analysis of the run, computed from its
	// constants alone, or nil for a method without one.
	Stability() *stability.Report
	// Trained calls f with the non-private weights and the statistics of
	// the run, for diagnostics that are never published; it fails after
	// Release.
	Trained(ctx context.Context, f func(*trainer.Model, trainer.Stats)) error
}

// Outcome is what a release returns.
type Outcome struct {
	Model       *trainer.Model
	Certificate *Certificate
	// Stats are statistics of the data (of the solver or the trainer):
	// never published.
	Stats trainer.Stats
}

// methods lists the registered methods in the order shown to users, the
// order of dp.ReleaseMechanisms: the output-perturbation mechanisms of
// package perturb, then the training-time ones. This package registers
// output perturbation, objective perturbation and AMP; the decision stump
// and DP-SGD are registered by their packages (stump, release/dpsgd) when
// imported.
var methods = func() []registered {
	var out []registered
	for _, n := range perturb.Mechanisms() {
		noise, err := perturb.Lookup(n)
		if err != nil {
			panic(err)
		}
		out = append(out, outputMethod{noise})
	}
	return append(out, objectiveMethod{perturb.Objective}, objectiveMethod{perturb.AMP})
}()

// Register adds m, a method in its three roles, to the registry, in the
// place of its name among dp.ReleaseMechanisms. It is for the init function
// of a package that holds a method of its own (package stump registers the
// decision stump, package release/dpsgd DP-SGD), and is not safe to call concurrently with Lookup. It
// panics, a programmer's error, when the name is not a release mechanism
// of package dp or is registered already.
func Register(m interface {
	Method
	Tuner
	Verifier
}) {
	order := dp.ReleaseMechanisms()
	at := slices.Index(order, m.Name())
	if at < 0 || slices.ContainsFunc(methods, func(x registered) bool { return x.Name() == m.Name() }) {
		panic(fmt.Sprintf("release: Register(%q): not a release mechanism of package dp, or registered twice", m.Name()))
	}
	i := slices.IndexFunc(methods, func(x registered) bool { return slices.Index(order, x.Name()) > at })
	if i < 0 {
		i = len(methods)
	}
	methods = slices.Insert(methods, i, registered(m))
}

// StumpRowsTaker is the optional interface of a method that reads the rows
// [z, 1] of the stump map (preprocess.RowMap.Stump: the per-feature map z,
// each entry in [-1, 1], and the bias 1; a null row is zero, bias
// included) instead of the unit-ball rows: the decision stump of package
// stump, which decides on the per-feature values.
type StumpRowsTaker interface {
	// TakesStumpRows reports whether the method reads the stump map's rows.
	TakesStumpRows() bool
}

// TakesStumpRows reports whether m reads the rows [z, 1] of the stump map
// rather than the unit-ball rows (StumpRowsTaker).
func TakesStumpRows(m Method) bool {
	t, ok := m.(StumpRowsTaker)
	return ok && t.TakesStumpRows()
}

// Lookup returns the method named m, or an error wrapping
// perturb.ErrMechanism that lists the names (and, for a release mechanism
// of package dp that no imported package registered, names the package to
// import).
func Lookup(m dp.Mechanism) (Method, error) { return lookup(m) }

// LookupTuner returns the Tuner of the method named m, or Lookup's error.
func LookupTuner(m dp.Mechanism) (Tuner, error) { return lookup(m) }

// LookupVerifier returns the Verifier of the method named m, or Lookup's
// error.
func LookupVerifier(m dp.Mechanism) (Verifier, error) { return lookup(m) }

func lookup(m dp.Mechanism) (registered, error) { return lookupIn(methods, m) }

// providers names the package that registers a method registered outside
// this package.
var providers = map[dp.Mechanism]string{
	perturb.Stump: "github.com/stabpriv/stabpriv/stump",
	perturb.DPSGD: "github.com/stabpriv/stabpriv/release/dpsgd",
}

// lookupIn returns the method of reg named m, or Lookup's error.
func lookupIn(reg []registered, m dp.Mechanism) (registered, error) {
	for _, x := range reg {
		if x.Name() == m {
			return x, nil
		}
	}
	if pkg, ok := providers[m]; ok {
		return nil, fmt.Errorf("%w: %q is not registered in this program: import %s", perturb.ErrMechanism, string(m), pkg)
	}
	return nil, fmt.Errorf("%w: %q, want one of %s", perturb.ErrMechanism, string(m), List())
}

// Methods returns every method, in the order shown to users.
func Methods() []Method {
	out := make([]Method, len(methods))
	for i, m := range methods {
		out[i] = m
	}
	return out
}

// List returns the methods' names joined by ", " (for help texts and
// messages).
func List() string { return names(func(registered) bool { return true }) }

// SGDList returns the names of the methods that release an SGD run
// (Method.SGD) joined by ", " (for messages about the SGD knobs and
// partitioned fits).
func SGDList() string { return names(registered.SGD) }

// names returns the names of the methods that keep accepts, in the order
// shown to users, joined by ", ".
func names(keep func(registered) bool) string {
	var out []string
	for _, m := range methods {
		if keep(m) {
			out = append(out, string(m.Name()))
		}
	}
	return strings.Join(out, ", ")
}

// certRun returns the run record of the certificate c, or an error
// wrapping ErrConfig when c or its run record is nil.
func certRun(c *Certificate) (*trainer.Run, error) {
	if c == nil || c.Run == nil {
		return nil, fmt.Errorf("%w: the certificate has no run record", ErrConfig)
	}
	return c.Run, nil
}

// checkScale returns an error unless scale is finite and positive.
func checkScale(scale float64) error {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return fmt.Errorf("%w: lambda scale %v, want finite > 0", ErrConfig, scale)
	}
	return nil
}

// scaleOf returns pub's AutoScale, 1 when it is 0.
func (pub Public) scaleOf() float64 {
	if pub.AutoScale == 0 {
		return 1
	}
	return pub.AutoScale
}

// finish sets what every release's certificate shares: the noise seed of a
// seeded source and the weights' hash, of the weights with every zero
// written +0 (dp.PositiveZeros: a verifier refuses a -0).
func finish(out *Outcome, src perturb.Source) *Outcome {
	dp.PositiveZeros(out.Model.W)
	out.Certificate.NoiseSeed = perturb.NoiseSeed(src)
	out.Certificate.WeightsSHA256 = dp.WeightsSHA256(out.Model.W)
	return out
}

// CheckPrepare runs the checks a Prepare that trains afresh starts with,
// for the methods of this package and of others (release/dpsgd): the
// budget and the settings by the method m, and rows present (an error
// wrapping ErrConfig otherwise). It returns the rows' shape.
func CheckPrepare(m Method, rows Rows, b dp.Budget) (n, d int, err error) {
	if err := m.CheckBudget(b); err != nil {
		return 0, 0, err
	}
	if err := m.CheckConfig(rows.Config); err != nil {
		return 0, 0, err
	}
	if rows.X == nil {
		return 0, 0, fmt.Errorf("%w: no rows", ErrConfig)
	}
	n, d = rows.X.Dims()
	return n, d, nil
}
