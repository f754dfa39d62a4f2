package private

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/sirupsen/logrus"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/objpert"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// Budget is the total privacy budget of one Fit: every private step draws
// from it, and the certificate's ledger lists the draws.
type Budget struct {
	// Epsilon > 0 and Delta in [0, 1): delta is 0 for the pure mechanisms.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// Options configures Fit. Every zero value is documented.
type Options struct {
	// Mechanism releases the weights by output perturbation. The empty
	// string means a non-private fit: the trained weights are returned as
	// they are, with no certificate.
	Mechanism perturb.Mechanism
	// Noise is the noise source of the release. Nil means perturb.Secure(),
	// the only source whose release is private; perturb.Seeded gives a
	// reproducible release whose certificate says it is not private.
	Noise perturb.Source
	// NoiseSeed is recorded in the certificate of a seeded release (the
	// seed given to perturb.Seeded). Ignored for other sources.
	NoiseSeed uint64
	// Preprocess maps raw features to model inputs. The empty value means
	// Bounds when the schema declares bounds, else an error for a private
	// fit and Standardize for a non-private one.
	Preprocess Preprocess
	// TestFrac in [0, 1) is the share of rows held out for testing; 0 trains
	// on every row.
	TestFrac float64
	// Seed seeds the split (by row position only), the permutations of SGD
	// and the dropout masks. It is published in the certificate.
	Seed uint64
	// Stratify splits within each class, keeping the class proportions.
	// The split then depends on the labels, so it is refused for a private
	// fit.
	Stratify bool
	// Trainer holds the training knobs (loss, elastic net, schedule, step,
	// passes, batch, clipping, dropout, averaging, engine). Fit sets its
	// Classes (from the schema), Kappa (1, enforced by the preprocessing),
	// Seed and Logger. A nil Loss means logistic for two classes and
	// softmax for more.
	Trainer trainer.Config
	// Auto chooses lambda, the clipping norm G, the schedule and l1 ratio 0
	// by the data-independent rule of AutoKnobs, overriding the values in
	// Trainer. It needs a Mechanism.
	Auto bool
	// Diagnostics computes non-private statistics of the run (Released.
	// Diagnostics): metrics of the trained and released weights on both
	// splits, the run's statistics. They are not covered by any claim.
	Diagnostics bool
	// Logger receives progress. Nil means silent.
	Logger logrus.FieldLogger
}

// Released is the outcome of Fit: the released model with everything needed
// to apply and to verify it. Every field but Diagnostics is public or
// privatized (or, for Standardize, named in the certificate as not
// covered) and is written into the model file.
type Released struct {
	// Private reports a private release of the table: a mechanism, the
	// secure source, and a preprocessing inside the guarantee.
	Private bool `json:"private"`
	// Model holds the released weights (the trained weights when the fit
	// is not private).
	Model *trainer.Model `json:"model"`
	// Certificate states the claim; nil for a fit without a mechanism.
	Certificate *perturb.Certificate `json:"certificate,omitempty"`
	// Schema is the declared schema (the classes used, and the label).
	Schema Schema `json:"schema"`
	// Preprocessing maps raw rows to model inputs.
	Preprocessing *Preprocessing `json:"preprocessing"`
	// Run holds the constants of a non-private run (a release publishes
	// them in its certificate); nil for a release.
	Run *trainer.Run `json:"run,omitempty"`
	// Stability is the analysis of the run, from its constants alone.
	Stability *stability.Report `json:"stability,omitempty"`
	// Split records how rows were split.
	Split SplitInfo `json:"split"`
	// AutoKnobs reports that lambda, the clipping norm, the l1 ratio and the
	// schedule were chosen by AutoKnobs (Options.Auto): Verify then
	// recomputes them from (n, dim, K, mechanism, budget).
	AutoKnobs bool `json:"auto_knobs,omitempty"`
	// Partitions describes a partitioned fit (FitPartitioned); nil for Fit.
	Partitions *PartitionInfo `json:"partitions,omitempty"`
	// Notes says, for a fit without a certificate, how it was made.
	Notes []string `json:"notes,omitempty"`
	// Diagnostics is set with Options.Diagnostics: statistics of the data,
	// never written to a model file.
	Diagnostics *Diagnostics `json:"-"`
}

// SplitInfo is how Fit split the rows of the table.
type SplitInfo struct {
	TestFrac   float64 `json:"test_frac"`
	Seed       uint64  `json:"seed"`
	Stratified bool    `json:"stratified"`
	Rows       int     `json:"rows"`
	TrainRows  int     `json:"train_rows"`
}

// Diagnostics are statistics of the data computed in the clear: for the
// user's eyes only, not covered by any privacy claim, never published.
type Diagnostics struct {
	Stats trainer.Stats
	// Trained and Released are metrics of the trained and released weights
	// on the training and test rows (rows with a declared label only).
	TrainedTrain, TrainedTest, ReleasedTrain, ReleasedTest Metric
	// NullRows counts the training rows whose label was not declared.
	NullRows int
	// Classes lists the labels seen in the table (a non-private run only).
	Classes []string
}

// Metric is a quality figure of a model on some rows: accuracy for
// classification, root mean squared error for regression.
type Metric struct {
	Name  string
	Value float64
	Rows  int
}

// tableNeighbours is the neighbouring relation of a Fit certificate.
const tableNeighbours = "replace-one on the rows of the input table: two tables with the same header and the same number of rows that differ in one row " +
	"(its features, its label or both), each well-formed (valid CSV, every feature cell a finite number); both fits use the same settings and Seed"

// Fit runs the certified pipeline on the raw table: it parses the rows
// against the schema, splits them by position, maps them with the public
// preprocessing, trains, analyzes the stability of the run and releases
// the weights with the mechanism of opts, calibrated to the budget.
//
// The guarantee is about the table: for two tables that differ in one row
// (tableNeighbours), the released weights and everything else in Released
// but Diagnostics satisfy the budget's (eps, delta)-DP, with the not-covered
// list of the certificate naming what is outside (Standardize's statistics,
// with a warning). The steps between the file and the release are inside
// the proof because each is a per-row map or depends only on public values:
//   - the split depends only on (n, TestFrac, Seed), so replacing one row
//     of the table replaces at most one training row (datasets.SplitIndex);
//   - the classes, hence K and the release dimension, come from the schema;
//     a row whose label is not declared becomes a null row, the zero vector
//     with the bias zero too, whose loss gradient is zero at every w: it
//     keeps n public and is as good a neighbour as any other row;
//   - Bounds and None are per-row maps with public constants that end in
//     the unit ball, so kappa = 1 holds for every row;
//   - the number of passes and every step size are fixed before training,
//     and the Auto knobs depend only on (n, d, K, eps, delta, mechanism).
//
// Errors: ErrSchema, ErrData, ErrBudget, ErrOptions, or the error of the
// trainer, the stability analysis (no route applies) or perturb, all before
// anything is released.
func Fit(ctx context.Context, t *Table, schema Schema, budget Budget, opts Options) (*Released, error) {
	if objpert.Handles(opts.Mechanism) {
		// Objective perturbation and AMP minimize a perturbed objective
		// instead of releasing an SGD run (objective.go).
		return fitObjective(ctx, t, schema, budget, opts)
	}
	log := opts.Logger
	if log == nil {
		l := logrus.New()
		l.SetLevel(logrus.PanicLevel)
		log = l
	}
	private := opts.Mechanism != ""
	if !private && schema.Classes == nil && opts.Trainer.Loss == nil && t != nil && slices.Contains(t.Columns, schema.Label) {
		// A non-private fit may take its classes, hence its default loss,
		// from the rows.
		schema.Classes = observedClasses(t, schema.Label)
	}
	loss, task, err := resolveLoss(opts.Trainer.Loss, schema)
	if err != nil {
		return nil, err
	}
	if err := checkBudget(opts.Mechanism, budget); err != nil {
		return nil, err
	}
	if err := schema.validate(task); err != nil {
		return nil, err
	}
	mode := opts.Preprocess
	if mode == "" {
		switch {
		case schema.Bounds != nil:
			mode = Bounds
		case private:
			return nil, fmt.Errorf("%w: a private fit needs declared feature bounds (preprocessing bounds) or the preprocessing none; standardize is available outside the guarantee", ErrOptions)
		default:
			mode = Standardize
		}
	}
	if err := mode.validate(); err != nil {
		return nil, err
	}
	if err := checkTestFrac(opts.TestFrac); err != nil {
		return nil, err
	}
	if private && opts.Stratify {
		return nil, fmt.Errorf("%w: a stratified split depends on the labels and is refused for a private fit", ErrOptions)
	}
	if opts.Auto && !private {
		return nil, fmt.Errorf("%w: the automatic knobs are calibrated for a release; give a mechanism", ErrOptions)
	}
	if private && opts.Trainer.Model != nil {
		return nil, fmt.Errorf("%w: a user graph model has no certified sensitivity", ErrOptions)
	}
	if private && task != losses.Regression && schema.Classes == nil {
		return nil, fmt.Errorf("%w: a private fit needs the classes declared in advance (reading them from the rows would leak them)", ErrSchema)
	}

	var diag *Diagnostics
	if opts.Diagnostics {
		diag = &Diagnostics{}
	}
	if !private && task != losses.Regression {
		if j := slices.Index(t.Columns, schema.Label); j >= 0 && diag != nil {
			diag.Classes = observedClasses(t, schema.Label)
		}
		if schema.Classes == nil {
			schema.Classes = observedClasses(t, schema.Label)
			if task == losses.Binary && len(schema.Classes) != 2 {
				return nil, fmt.Errorf("%w: binary label column %q has %d classes (%v), want 2", ErrSchema, schema.Label, len(schema.Classes), schema.Classes)
			}
			if len(schema.Classes) < 2 {
				return nil, fmt.Errorf("%w: label column %q has a single class", ErrSchema, schema.Label)
			}
		}
	}
	rows, err := prepareRows(t, schema, task, mode, opts)
	if err != nil {
		return nil, err
	}
	enc, trainIdx, testIdx, prep := rows.enc, rows.trainIdx, rows.testIdx, rows.prep
	Xtr, ytr, nullTr := rows.X, rows.y, rows.null

	cfg := opts.Trainer
	cfg.Loss, cfg.Kappa, cfg.Seed, cfg.Logger = loss, 1, opts.Seed, opts.Logger
	if private && !opts.Diagnostics {
		// The trainer's progress (objective, gradient norm, clipped rows,
		// time per pass) is a statistic of the data.
		cfg.Logger = nil
	}
	if !opts.Diagnostics {
		// Nothing reads the objective and gradient norm of the trained
		// weights: skip the pass over the data that computes them.
		cfg.SkipObjective = true
	}
	cfg.Classes = len(schema.Classes)
	n := len(trainIdx)
	if opts.Auto {
		k, err := AutoKnobs(n, prep.Dim(), loss.Outputs(cfg.Classes), opts.Mechanism, budget)
		if err != nil {
			return nil, err
		}
		k.apply(&cfg)
	}
	notes := fitNotes(mode, prep, task)
	log.WithFields(logrus.Fields{"rows": enc.n, "train": n, "d": prep.Dim(), "preprocess": mode}).Debug("private: rows prepared")
	tr, err := TrainRows(ctx, Xtr, ytr, cfg, notes)
	if err != nil {
		return nil, err
	}
	out := &Released{
		Private:       private && isSecure(opts.Noise) && mode.inside(),
		Schema:        publicSchema(schema),
		Preprocessing: prep,
		Stability:     tr.Report(),
		Split:         SplitInfo{TestFrac: opts.TestFrac, Seed: opts.Seed, Stratified: opts.Stratify, Rows: enc.n, TrainRows: n},
		AutoKnobs:     opts.Auto,
	}
	if diag != nil {
		run := tr.Run()
		diag.Stats, diag.NullRows = run.Stats, countTrue(nullTr)
		diag.TrainedTrain, _ = metricOf(tr, task, Xtr, ytr, nullTr)
		if len(testIdx) > 0 {
			Xte, yte, nullTe, err := apply(prep, enc, testIdx)
			if err != nil {
				return nil, err
			}
			diag.TrainedTest, _ = metricOf(tr, task, Xte, yte, nullTe)
			defer func() {
				if out.Model != nil {
					diag.ReleasedTest = evaluate(out.Model, task, Xte, yte, nullTe)
				}
			}()
		}
		defer func() {
			if out.Model != nil {
				diag.ReleasedTrain = evaluate(out.Model, task, Xtr, ytr, nullTr)
			}
		}()
		out.Diagnostics = diag
	}
	if !private {
		if out.Model, err = tr.Reveal(); err != nil {
			return nil, err
		}
		run := tr.Run()
		run.Stats = trainer.Stats{}
		out.Run = &run
		out.Notes = append(notes, "not private: the weights are released as trained, without a privacy guarantee")
		return out, nil
	}
	src := opts.Noise
	if src == nil {
		src = perturb.Secure()
	}
	m, cert, err := tr.Release(opts.Mechanism, budget.Epsilon, budget.Delta, src)
	if err != nil {
		return nil, err
	}
	cert.Neighbouring = tableNeighbours
	cert.Ledger = []perturb.Charge{releaseCharge(opts.Mechanism, budget)}
	if !cert.Private {
		cert.NoiseSeed = seedOf(src, opts.NoiseSeed)
	}
	out.Model, out.Certificate = m, cert
	return out, nil
}

// releaseCharge is the ledger entry of the release, the one private step of
// a Fit: it spends the whole budget.
func releaseCharge(m perturb.Mechanism, b Budget) perturb.Charge {
	return perturb.Charge{Step: "release of the weights (output perturbation)", Mechanism: m, Epsilon: b.Epsilon, Delta: b.Delta}
}

// preparedRows are the training rows of a table as a fit receives them.
type preparedRows struct {
	enc               *encoded
	trainIdx, testIdx []int
	prep              *Preprocessing
	// X, y and null are the training rows mapped by prep, their labels and
	// which of them are null rows.
	X    *mat.Dense
	y    []float64
	null []bool
}

// prepareRows parses the table against the schema, splits its rows
// (opts.TestFrac, opts.Seed, opts.Stratify), builds the preprocessing of
// mode (a standardizer is fitted on the training rows) and maps the
// training rows with it.
func prepareRows(t *Table, schema Schema, task losses.Task, mode Preprocess, opts Options) (*preparedRows, error) {
	enc, err := encode(t, schema, task)
	if err != nil {
		return nil, err
	}
	trainIdx, testIdx, err := split(enc, opts)
	if err != nil {
		return nil, err
	}
	rawTrain := mat.NewDense(len(trainIdx), enc.d, nil)
	for r, i := range trainIdx {
		rawTrain.SetRow(r, enc.x[i*enc.d:(i+1)*enc.d])
	}
	prep, err := newPreprocessing(mode, enc.features, schema, rawTrain)
	if err != nil {
		return nil, err
	}
	X, y, null, err := apply(prep, enc, trainIdx)
	if err != nil {
		return nil, err
	}
	return &preparedRows{enc: enc, trainIdx: trainIdx, testIdx: testIdx, prep: prep, X: X, y: y, null: null}, nil
}

// resolveLoss returns the loss (the default for the schema when nil) and
// its task.
func resolveLoss(l losses.Loss, s Schema) (losses.Loss, losses.Task, error) {
	if l == nil {
		if len(s.Classes) > 2 {
			l = losses.Softmax{}
		} else {
			l = losses.Logistic{}
		}
	}
	return l, l.Task(), nil
}

// checkBudget validates the budget for the mechanism: the release is the
// one private step, so it spends the whole budget.
func checkBudget(m perturb.Mechanism, b Budget) error {
	if m == "" {
		if b != (Budget{}) {
			return fmt.Errorf("%w: a budget without a mechanism", ErrBudget)
		}
		return nil
	}
	if _, err := perturb.Calibrate(m, b.Epsilon, b.Delta, perturb.Sensitivity{L2: 1}, 1); err != nil {
		return fmt.Errorf("%w: %w", ErrBudget, err)
	}
	return nil
}

func isSecure(src perturb.Source) bool {
	return src == nil || perturb.SourceName(src) == perturb.SourceSecure
}

// seedOf returns the seed to publish for a non-secure source.
func seedOf(src perturb.Source, seed uint64) *uint64 {
	if perturb.SourceName(src) == perturb.SourceSeeded {
		return &seed
	}
	return nil
}

// split returns the training and test row positions.
func split(enc *encoded, opts Options) (train, test []int, err error) {
	if !opts.Stratify || opts.TestFrac == 0 {
		return datasets.SplitIndex(enc.n, opts.TestFrac, opts.Seed)
	}
	ds := &datasets.Dataset{X: mat.NewDense(enc.n, 1, nil), Y: enc.y, Classes: []string{}}
	for i := range enc.n {
		ds.X.Set(i, 0, float64(i))
	}
	tr, te, err := datasets.Split(ds, opts.TestFrac, opts.Seed, true)
	if err != nil {
		return nil, nil, err
	}
	pos := func(d *datasets.Dataset) []int {
		out := make([]int, len(d.Y))
		for r := range out {
			out[r] = int(d.X.At(r, 0))
		}
		return out
	}
	return pos(tr), pos(te), nil
}

// apply maps the rows idx with the preprocessing; null rows become zero.
func apply(p *Preprocessing, enc *encoded, idx []int) (*mat.Dense, []float64, []bool, error) {
	X := mat.NewDense(len(idx), p.Dim(), nil)
	y := make([]float64, len(idx))
	null := make([]bool, len(idx))
	for r, i := range idx {
		y[r], null[r] = enc.y[i], enc.null[i]
		if null[r] {
			continue
		}
		if err := p.Apply(X.RawRowView(r), enc.x[i*enc.d:(i+1)*enc.d]); err != nil {
			return nil, nil, nil, fmt.Errorf("data row %d: %w", i+1, err)
		}
	}
	return X, y, null, nil
}

// fitNotes are the not-covered notes of a Fit certificate.
func fitNotes(mode Preprocess, p *Preprocessing, task losses.Task) []string {
	notes := []string{
		"public, and so not protected: the header (column names), the number of rows, the declared schema (label, classes, bounds) and every setting of the run; the classes and bounds must be declared without looking at the rows (bounds computed from the rows, say their minimum and maximum, are statistics of the data and void the claim)",
		"a table that is not well-formed (a CSV syntax error, a ragged row, a feature cell that is not a finite number) is refused before training: the claim is about well-formed tables",
		"the split depends only on the number of rows, the test fraction and the seed; the held-out rows are not used by the release",
		"preprocessing: " + p.Map,
	}
	switch task {
	case losses.Regression:
		notes = append(notes, "a row whose label is not a finite number is a null row (features and bias 0); labels are clamped to the declared label bound")
	default:
		notes = append(notes, "a row whose label is not one of the declared classes is a null row (features and bias 0, zero gradient); the number of such rows is not published")
	}
	if !mode.inside() {
		notes = append(notes, "WARNING: not covered: the standardization means and scales are fitted on the training split, written beside the weights and not private; "+
			"one row changes every standardized row, so the claim holds for the standardized rows only, not for the table (use declared bounds, or the preprocessing none, to be covered)")
	}
	return notes
}

// publicSchema returns the schema as written in a model file.
func publicSchema(s Schema) Schema {
	s.Classes = slices.Clone(s.Classes)
	s.Bounds = nil // in the preprocessing, in model-input order
	return s
}

func countTrue(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// metricOf evaluates the trained weights of tr.
func metricOf(tr *Trained, task losses.Task, X *mat.Dense, y []float64, null []bool) (Metric, bool) {
	var m Metric
	_, ok := tr.metric(func(model *trainer.Model) float64 {
		m = evaluate(model, task, X, y, null)
		return m.Value
	})
	return m, ok
}

// evaluate computes the metric of model on the rows that are not null.
func evaluate(model *trainer.Model, task losses.Task, X *mat.Dense, y []float64, null []bool) Metric {
	_, d := X.Dims()
	z := make([]float64, model.K)
	var hit, ss float64
	rows := 0
	for i := range y {
		if null[i] {
			continue
		}
		rows++
		x := X.RawRowView(i)[:d]
		if task == losses.Regression {
			model.Margins(z, x)
			r := z[0] - y[i]
			ss += r * r
			continue
		}
		if model.Predict(x) == y[i] {
			hit++
		}
	}
	if rows == 0 {
		return Metric{Name: "none", Rows: 0}
	}
	if task == losses.Regression {
		return Metric{Name: "rmse", Value: math.Sqrt(ss / float64(rows)), Rows: rows}
	}
	return Metric{Name: "accuracy", Value: hit / float64(rows), Rows: rows}
}

// checkTestFrac refuses a test fraction outside [0, 1).
func checkTestFrac(f float64) error {
	if !check.HalfOpenUnit(f) {
		return fmt.Errorf("%w: test fraction %v, want in [0, 1)", ErrOptions, f)
	}
	return nil
}
