package runflags

import (
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/release"
)

// checkBounds reads the feature bounds and the feature map: --bounds FILE
// or --bounds-all lo,hi (public, at no cost), or, for a private run without
// them, the share of epsilon the bounds estimate spends (--bounds-share);
// or --standardize. embedded reports the command's own data, whose shipped
// bounds --bounds-share replaces by the estimate.
func (f *Flags) checkBounds(set map[string]bool, embedded bool, r *Run) error {
	if f.Bounds != "" && f.BoundsAll != "" {
		return usagef("--bounds and --bounds-all exclude each other: give the bounds of each column in the file, or one range for all")
	}
	if f.Bounds != "" {
		b, err := datasets.ReadBoundsFile(f.Bounds)
		if err != nil {
			return usagef("--bounds: %w", err)
		}
		r.Schema.Bounds = b
	}
	if f.BoundsAll != "" {
		b, err := datasets.ParseRange(f.BoundsAll)
		if err != nil {
			return usagef("--bounds-all: %w", err)
		}
		r.Schema.Bounds, r.Schema.All = nil, &b
	}
	mode, given := f.Standardize.value()
	if set["bounds-method"] {
		switch m := private.BoundsMethod(f.BoundsMethod); {
		case m != private.BoundsCentres && m != private.BoundsRanges:
			return usagef("--bounds-method %q, want %s or %s", f.BoundsMethod, private.BoundsCentres, private.BoundsRanges)
		case !r.Private() || f.Bounds != "" || f.BoundsAll != "" || given:
			return usagef("--bounds-method applies to a private run whose bounds are estimated (no --bounds, --bounds-all or --standardize)")
		}
		if embedded {
			r.Schema.Bounds = nil // the estimate replaces the shipped bounds
		}
		r.Options.BoundsMethod = private.BoundsMethod(f.BoundsMethod)
	}
	if set["hash-buckets"] {
		if f.HashBuckets < 2 || f.HashBuckets > datasets.MaxHashBuckets {
			return usagef("--hash-buckets %d, want 2 to %d", f.HashBuckets, datasets.MaxHashBuckets)
		}
		r.Options.HashBuckets = f.HashBuckets
	}
	if set["bounds-share"] {
		switch {
		case !r.Private():
			return usagef("--bounds-share applies to a private release (--mechanism %s): a non-private run without bounds standardizes", release.List())
		case f.Bounds != "" || f.BoundsAll != "":
			return usagef("--bounds-share: the bounds are declared (--bounds, --bounds-all) and cost nothing; drop one of them")
		case given:
			return usagef("--bounds-share estimates the bounds of the feature map bounds; drop --standardize %s", f.Standardize.text)
		case !check.OpenUnit(f.BoundsShare):
			return usagef("--bounds-share %v leaves nothing for the %s: want a share in (0, 1) of --epsilon", f.BoundsShare, map[bool]string{true: "release", false: "bounds estimate"}[f.BoundsShare >= 1])
		}
		if embedded {
			r.Schema.Bounds = nil // the estimate replaces the shipped bounds
		}
		r.Options.BoundsShare = f.BoundsShare
	}
	if !given {
		return nil
	}
	if mode == preprocess.Bounds {
		return usagef("--standardize bounds: give --bounds FILE or --bounds-all lo,hi, or nothing for a private estimate (--standardize auto)")
	}
	if f.Bounds != "" || f.BoundsAll != "" {
		return usagef("--bounds or --bounds-all and --standardize %s exclude each other", f.Standardize.text)
	}
	r.Options.Preprocess = mode
	return nil
}

// Regression reports whether the run's loss is a regression loss.
func (r *Run) Regression() bool {
	l := r.Options.Trainer.Loss
	return l != nil && l.Task() == losses.Regression
}

// checkSchema builds the schema: the label, the declared classes, the
// bounds (read from --bounds, or --bounds-all, or estimated from
// --bounds-share of the budget) and the feature map.
func (f *Flags) checkSchema(set map[string]bool, defaults *datasets.Schema, r *Run) error {
	if defaults != nil {
		if f.Label != "" && f.Label != defaults.Label {
			return usagef("--label %q without --data: the embedded data set's label is %s", f.Label, defaults.Label)
		}
		if f.Classes != "" {
			return usagef("--classes applies to --data; the embedded data declares %s", strings.Join(defaults.Classes, " and "))
		}
		r.Schema = *defaults
	} else {
		if f.Label == "" {
			return usagef("--label is required: the name of the label column")
		}
		r.Schema = datasets.Schema{Label: f.Label, LabelBound: f.LabelBound}
		if f.Classes != "" {
			for _, c := range strings.Split(f.Classes, ",") {
				r.Schema.Classes = append(r.Schema.Classes, strings.TrimSpace(c))
			}
			if len(r.Schema.Classes) == 1 {
				return usagef("--classes %s declares one class: name every class of the label, at least 2 (a,b: the second is +1)", f.Classes)
			}
		}
	}
	if f.Categories != "" {
		c, err := datasets.ReadCategoriesFile(f.Categories)
		if err != nil {
			return usagef("--schema: %w", err)
		}
		r.Schema.Categories = c // checked against the label and the bounds by private.NewPlan
	}
	if err := f.checkBounds(set, defaults != nil, r); err != nil {
		return err
	}
	if f.Partitions > 1 || f.PrivacyID != "" {
		// A fit per privacy ID is a partitioned fit, with one partition or more.
		what := "--partitions"
		if f.PrivacyID != "" {
			what = "--privacy-id"
		}
		if r.Options.Preprocess == preprocess.Standardize {
			return usagef("%s: a standardization fitted on the rows is refused; give --bounds or --standardize none", what)
		}
		if r.Private() && r.Options.Preprocess == "" && !r.Schema.Declared() {
			return usagef("%s needs public bounds (--bounds FILE or --bounds-all lo,hi) or --standardize none: bounds are estimated per fit", what)
		}
		if r.Schema.Classes == nil && !r.Regression() {
			return usagef("%s needs --classes declared: the partitions must agree on them", what)
		}
	}
	if r.Private() && r.Schema.Classes == nil && !r.Regression() {
		return usagef("a private run needs --classes a,b,... declared in advance (classes read from the rows would leak them)")
	}
	return nil
}

// checkProject sets the projection of --project: k, 0 for none, or auto
// (the default) for the public rule of private.Options.ProjectAuto. A
// partitioned fit (with --privacy-id too) does not know n before its
// pass, so it refuses an explicit auto and runs without a projection by default.
func (f *Flags) checkProject(set map[string]bool, r *Run) error {
	if f.Project == "auto" {
		partitioned := f.Partitions > 1 || f.PrivacyID != ""
		if partitioned && set["project"] {
			return usagef("--project auto needs the number of training rows before the fit; a partitioned fit takes --project k")
		}
		r.Options.ProjectAuto = !partitioned
		return nil
	}
	k, err := strconv.Atoi(f.Project)
	if err != nil || k < 0 {
		return usagef("--project %q, want k >= 1, 0 for none, or auto", f.Project)
	}
	r.Options.Project = k
	return nil
}
