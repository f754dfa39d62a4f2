package private

import (
	"context"
	"fmt"
	"slices"

	"github.com/sirupsen/logrus"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/selection"
	"github.com/stabpriv/stabpriv/trainer"
)

// Fit runs the certified pipeline on the raw table: it parses the rows
// against the schema, splits them by position, maps them with the public
// preprocessing, and hands them to the release method of opts.Mechanism,
// which trains (or minimizes) and releases within the budget; without a
// mechanism the trained weights are returned as they are.
//
// The guarantee is about the table: for two tables that differ in one row
// (modelfile.TableNeighbours), the released weights and everything else in
// the Released but Diagnostics satisfy the budget's (eps, delta)-DP, with
// the not-covered list of the certificate naming what is outside
// (Standardize's statistics, with a warning). The steps between the file
// and the release are inside the proof because each is a per-row map or
// depends only on public values:
//   - the split depends only on (n, TestFrac, Seed), so replacing one row
//     of the table replaces at most one training row (datasets.SplitIndex);
//   - the classes, hence K and the release dimension, come from the schema;
//     a row whose label is not declared becomes a null row, the zero vector
//     with the bias zero too, whose loss gradient is zero at every w: it
//     keeps n public and is as good a neighbour as any other row;
//   - Bounds and None are per-row maps with public constants that end in
//     the unit ball, so kappa = 1 holds for every row;
//   - without declared bounds, a private fit in Bounds mode first estimates
//     them from the training rows at BoundsShare * eps (privbounds.Estimate,
//     eps_b-DP) and releases at the rest of the budget with those bounds
//     as public constants: the bounds and the weights together are
//     (eps, delta)-DP by basic composition with an adaptively chosen second
//     step (docs/DESIGN.md, section 6); the certificate lists the bounds
//     and both charges (modelfile.ComposeEstimate);
//   - the number of passes and every step size are fixed before training,
//     and the Auto knobs depend only on (n, d, K, eps, delta, mechanism).
//
// Errors: those of NewPlan, datasets.ErrFormat for a table outside the
// domain of the guarantee, or the error of the release method, all before
// anything is released.
//
// Fit leaves t as it was: it works on a copy of its values. FitInPlace
// works in the table's own storage instead, for a caller that does not
// need the table afterwards (the train command).
func Fit(ctx context.Context, t *datasets.Table, schema datasets.Schema, budget dp.Budget, opts Options) (*modelfile.Released, error) {
	if t != nil {
		t = t.Clone()
	}
	return FitInPlace(ctx, t, schema, budget, opts)
}

// FitInPlace is Fit without a copy of the rows: the table's values become
// the model inputs the release trains on, encoded and mapped where the
// reader stored them (datasets.Table.EncodeInPlace, preprocess.RowMap.
// RowsInPlace), so that the fit holds one copy of the rows, not two. It
// takes t over: the caller must not use t afterwards but for its Columns
// and Source (once the fit has read the rows, t has none left, Len 0).
// The release, its certificate and the errors are Fit's, bit for bit.
func FitInPlace(ctx context.Context, t *datasets.Table, schema datasets.Schema, budget dp.Budget, opts Options) (*modelfile.Released, error) {
	var observed []string
	if opts.Mechanism == "" && opts.Select == nil && t != nil && slices.Contains(t.Columns, schema.Label) && (opts.Trainer.Loss == nil || opts.Trainer.Loss.Task() != losses.Regression) {
		// A non-private fit may take its classes, hence its default loss,
		// from the rows.
		observed = t.LabelValues(schema.Label)
		if schema.Classes == nil {
			schema.Classes = observed
			if opts.Trainer.Loss != nil && opts.Trainer.Loss.Task() == losses.Binary && len(observed) != 2 {
				return nil, fmt.Errorf("%w: binary label column %q has %d classes (%v), want 2", datasets.ErrSchema, schema.Label, len(observed), observed)
			}
			if len(observed) < 2 {
				return nil, fmt.Errorf("%w: label column %q has a single class", datasets.ErrSchema, schema.Label)
			}
		}
	}
	pl, err := NewPlan(schema, budget, opts)
	if err != nil {
		return nil, err
	}
	if opts.PrivacyID != "" {
		return nil, fmt.Errorf("%w: a fit per privacy ID (%q) runs as a partitioned fit, with one partition or more (partition.Fit)", ErrOptions, opts.PrivacyID)
	}
	rows, err := pl.prepare(t)
	if err != nil {
		return nil, err
	}
	n, dim := rows.X.Dims()
	if pl.Options.Select != nil && pl.Options.Select.Method.IsRule() {
		if err := pl.useRule(n, dim); err != nil {
			return nil, err
		}
	}
	opts = pl.Options // the rule names its mechanism
	out := &modelfile.Released{
		Schema:        modelfile.PublicSchema(pl.Schema),
		Preprocessing: rows.prep,
		Split:         modelfile.SplitInfo{TestFrac: opts.TestFrac, Seed: opts.Seed, Stratified: opts.Stratify, Rows: rows.rows, TrainRows: n},
		AutoKnobs:     opts.Auto,
	}
	cfg, err := pl.Config(n, dim, opts.Seed)
	if err != nil {
		return nil, err
	}
	if w := release.DropoutWarning(cfg); w != "" {
		pl.log().Warn(w)
	}
	notes, err := out.PipelineNotes(pl.Task)
	if err != nil {
		return nil, err
	}
	pl.log().WithFields(logrus.Fields{"rows": rows.rows, "train": n, "d": dim, "preprocess": pl.Mode, "mechanism": opts.Mechanism}).Debug("private: rows prepared")
	var diag *modelfile.Diagnostics
	if opts.Diagnostics {
		diag = &modelfile.Diagnostics{NullRows: countTrue(rows.null)}
		if pl.Method == nil && opts.Select == nil {
			diag.Classes = observed
		}
		if pl.Task != losses.Regression {
			diag.MajorityTrain = majority(rows.y, rows.null)
			diag.MajorityTest = majority(rows.testY, rows.testNull)
		}
		out.Diagnostics = diag
	}
	if pl.Options.Select != nil {
		return fitSelect(ctx, pl, rows, cfg, notes, out)
	}
	if pl.Method == nil {
		return fitClear(ctx, pl, rows, cfg, notes, out)
	}
	left, err := pl.left()
	if err != nil {
		return nil, err
	}
	p, err := pl.Method.Prepare(ctx, release.Rows{X: rows.X, Y: rows.y, Config: cfg, Notes: notes}, left)
	if err != nil {
		return nil, err
	}
	var test *evalRows
	if diag != nil {
		if test, err = rows.test(); err != nil {
			return nil, err
		}
		err := p.Trained(ctx, func(m *trainer.Model, _ trainer.Stats) {
			diag.TrainedTrain = evaluate(m, pl.Task, rows.X, rows.y, rows.null)
			diag.TrainedTest = test.evaluate(m, pl.Task)
		})
		if err != nil {
			return nil, err
		}
	}
	rel, err := p.Release(ctx, opts.Noise)
	if err != nil {
		return nil, err
	}
	rel.Certificate.Neighbouring = out.Neighbours()
	if err := pl.account(rel.Certificate, rows.prep); err != nil {
		return nil, err
	}
	out.Private = rel.Certificate.Private && pl.Mode.Inside()
	out.Model, out.Certificate, out.Stability = rel.Model, rel.Certificate, p.Stability()
	if diag != nil {
		diag.Stats = rel.Stats
		diag.ReleasedTrain = evaluate(out.Model, pl.Task, rows.X, rows.y, rows.null)
		diag.ReleasedTest = test.evaluate(out.Model, pl.Task)
	}
	return out, nil
}

// fitSelect is Fit with a private selection of the setting: the plan of
// the selection is checked from public values (n, the model's shape, the
// budget, the seed), then run on the training rows (selection.Plan.Run).
func fitSelect(ctx context.Context, pl *Plan, rows *preparedRows, cfg trainer.Config, notes []string, out *modelfile.Released) (*modelfile.Released, error) {
	n, dim := rows.X.Dims()
	left, err := pl.left()
	if err != nil {
		return nil, err
	}
	sp, err := selection.NewPlan(*pl.Options.Select, n, pl.Loss, len(pl.Schema.Classes), dim, left, pl.Options.Seed)
	if err != nil {
		return nil, err
	}
	so, err := sp.Run(ctx, rows.X, rows.y, cfg, notes, pl.Options.Noise, pl.Options.Logger)
	if err != nil {
		return nil, err
	}
	rel := so.Release
	rel.Certificate.Neighbouring = out.Neighbours()
	if err := pl.account(rel.Certificate, rows.prep); err != nil {
		return nil, err
	}
	out.Private = rel.Certificate.Private && pl.Mode.Inside()
	out.Model, out.Certificate, out.Selection, out.AutoKnobs = rel.Model, rel.Certificate, so.Record, true
	if so.Prepared != nil {
		out.Stability = so.Prepared.Stability()
	}
	if diag := out.Diagnostics; diag != nil {
		test, err := rows.test()
		if err != nil {
			return nil, err
		}
		diag.Stats = rel.Stats
		diag.ReleasedTrain = evaluate(out.Model, pl.Task, rows.X, rows.y, rows.null)
		diag.ReleasedTest = test.evaluate(out.Model, pl.Task)
	}
	return out, nil
}

// fitClear is Fit without a mechanism: the trainer and the schema, the
// weights returned as trained.
func fitClear(ctx context.Context, pl *Plan, rows *preparedRows, cfg trainer.Config, notes []string, out *modelfile.Released) (*modelfile.Released, error) {
	tr, err := release.TrainRows(ctx, rows.X, rows.y, cfg, notes)
	if err != nil {
		return nil, err
	}
	if out.Model, err = tr.Reveal(); err != nil {
		return nil, err
	}
	run := tr.Run()
	out.Stability = tr.Report()
	if diag := out.Diagnostics; diag != nil {
		test, err := rows.test()
		if err != nil {
			return nil, err
		}
		diag.Stats = run.Stats
		diag.TrainedTrain = evaluate(out.Model, pl.Task, rows.X, rows.y, rows.null)
		diag.TrainedTest = test.evaluate(out.Model, pl.Task)
		diag.ReleasedTrain, diag.ReleasedTest = diag.TrainedTrain, diag.TrainedTest
	}
	run.Stats = trainer.Stats{}
	out.Run = &run
	out.Notes = append(notes, "not private: the weights are released as trained, without a privacy guarantee")
	return out, nil
}
