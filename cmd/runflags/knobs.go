package runflags

import (
	"math"
	"slices"
	"strconv"

	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// floatFlag parses a numeric flag value that may be "auto".
func floatFlag(name, v string, lo, hi float64) (float64, bool, error) {
	if v == "auto" {
		return 0, true, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || x < lo || x > hi {
		return 0, false, usagef("--%s %q, want auto or a number in [%g, %g]", name, v, lo, hi)
	}
	return x, false, nil
}

// checkKnobs checks the training knobs, the seed and the split.
func (f *Flags) checkKnobs(set map[string]bool, r *Run) error {
	priv := r.Private()
	cfg := &r.Options.Trainer
	if f.Loss != "" {
		l, err := losses.ByName(f.Loss)
		if err != nil {
			return usagef("--loss: %w", err)
		}
		cfg.Loss = l
	}
	lambda, autoLambda, err := floatFlag("lambda", f.Lambda, 0, math.MaxFloat64)
	if err != nil {
		return err
	}
	alpha, autoAlpha, err := floatFlag("l1-ratio", f.L1Ratio, 0, 1)
	if err != nil {
		return err
	}
	clip, autoClip, err := floatFlag("clip", f.Clip, 0, math.MaxFloat64)
	if err != nil {
		return err
	}
	if autoLambda && !priv {
		lambda = 1e-3
	}
	if autoAlpha && !priv {
		alpha = 0.15
	}
	if r.Options.Select != nil {
		lambda, alpha, autoClip = 0, 0, true // the selection chooses them
	}
	// A method's rule sets the knobs it takes (release.KnobTaker); the
	// user's value of one of them means the user's knobs, not the rule's.
	r.Options.Auto = r.Options.Mechanism != "" && autoLambda && !slices.ContainsFunc(release.TakenKnobs(r.Options.Method), func(k release.Knob) bool { return set[string(k)] })
	if r.Options.Auto {
		for _, name := range []string{"clip", "l1-ratio", "schedule", "step"} {
			if set[name] {
				return usagef("--%s: --lambda auto chooses lambda, --clip, --l1-ratio 0 and the schedule itself; give --lambda to set them", name)
			}
		}
	} else if autoClip {
		clip = 0
	}
	cfg.Reg = regularizers.ElasticNet{Lambda: lambda, L1Ratio: alpha}
	cfg.Clip, cfg.Dropout, cfg.Radius, cfg.Average = clip, f.Dropout, f.Radius, f.Average
	cfg.Passes, cfg.Batch, cfg.LabelBound = f.Passes, f.Batch, f.LabelBound
	if f.Passes <= 0 {
		return usagef("--passes %d, want >= 1", f.Passes)
	}
	if f.Batch <= 0 {
		return usagef("--batch %d, want >= 1", f.Batch)
	}
	if f.Dropout <= 0 || f.Dropout > 1 || math.IsNaN(f.Dropout) {
		return usagef("--dropout %v, want in (0, 1]", f.Dropout)
	}
	if err := f.checkProject(set, r); err != nil {
		return err
	}
	if f.Partitions < 1 || f.Partitions > placement.MaxPartitions {
		return usagef("--partitions %d, want 1 to %d", f.Partitions, placement.MaxPartitions)
	}
	if err := f.checkPrivacyID(set, r); err != nil {
		return err
	}
	cfg.Engine = f.Engine
	schedule, given := f.Schedule.value()
	if !given && priv && f.Step == "auto" && lambda*(1-alpha) > 0 {
		schedule = trainer.BoundedInverseT
	}
	if schedule == trainer.Custom {
		return usagef("--schedule custom needs a step function: use the library")
	}
	cfg.Schedule = schedule
	if f.Step != "auto" {
		eta, err := strconv.ParseFloat(f.Step, 64)
		if err != nil || !check.Positive(eta) {
			return usagef("--step %q, want auto or a finite number > 0", f.Step)
		}
		if cfg.Schedule != trainer.Constant {
			return usagef("--step %s applies to the constant schedule, not %s", f.Step, cfg.Schedule)
		}
		cfg.Eta = eta
	}
	if !check.HalfOpenUnit(f.TestFrac) {
		return usagef("--test-frac %v, want in [0, 1)", f.TestFrac)
	}
	r.Options.TestFrac, r.Options.Seed = f.TestFrac, f.Seed
	if cfg.Loss != nil && f.LabelBound != 0 && cfg.Loss.Task() != losses.Regression {
		return usagef("--label-bound applies to regression losses, not %s (%v)", f.Loss, cfg.Loss.Task())
	}
	return nil
}

// checkPrivacyID checks --privacy-id and --max-rows-per-id: both or
// neither, c >= 1, a non-empty column, and a run that is not a private
// selection (a fit per privacy ID is a partitioned fit, which releases the
// mechanism it is given or the public rule's).
func (f *Flags) checkPrivacyID(set map[string]bool, r *Run) error {
	switch {
	case f.PrivacyID == "" && set["privacy-id"]:
		return usagef("--privacy-id: give the column of the privacy IDs")
	case f.PrivacyID == "" && set["max-rows-per-id"]:
		return usagef("--max-rows-per-id applies with --privacy-id COLUMN")
	case f.PrivacyID == "":
		return nil
	case !set["max-rows-per-id"]:
		return usagef("--privacy-id %s needs --max-rows-per-id c: the number of rows kept per ID, which the noise grows with", f.PrivacyID)
	case f.MaxRowsPerID < 1:
		return usagef("--max-rows-per-id %d, want c >= 1", f.MaxRowsPerID)
	case r.Options.Select != nil && !r.Options.Select.Method.IsRule():
		return usagef("--privacy-id: a fit per privacy ID takes a named mechanism or the public rule; leave --select out or give --mechanism")
	}
	r.Options.PrivacyID, r.Options.MaxRowsPerID = f.PrivacyID, f.MaxRowsPerID
	return nil
}
