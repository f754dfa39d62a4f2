// Package private is the certified pipeline of stabpriv: one call, Fit,
// from the rows a user hands over to a released model whose privacy claim
// is about those rows.
//
// The lower packages each prove one step (trainer trains, stability bounds
// the sensitivity of a run, perturb and objpert add calibrated noise,
// release ties them into methods), and each step's claim is about its own
// input. A promise about a user's file needs every step between the file
// and the release inside one proof, and the glue between the steps (split,
// class set, preprocessing, settings, what is written beside the weights)
// is where such promises break. This package owns that glue: NewPlan checks
// the settings before any row is read, and Fit parses the table against the
// declared schema, splits it by position, maps the rows with the public
// preprocessing and hands them to the release method the options name
// (release.Lookup). A fit without a mechanism is the trainer and the schema
// alone. Fit works on a copy of the table's values; FitInPlace takes the
// table over and maps its values where the reader stored them, so that a
// fit holds one float64 copy of the rows (the train command's way).
//
// FitMatrix and FitRows are the numeric front door: a gonum matrix or a
// [][]float64 of features, the labels, and a Domain of public declarations
// (the classes, feature ranges or a norm bound, or none for the private
// estimate). They build the table of that data (its values, one copy,
// datasets.NewTableValues) and its schema and run FitInPlace on them: the
// same pipeline, rule and certificate. Their result carries
// Warnings, what the public values of the release say against its use
// (noise that swamps the weights, a model constant over its domain).
//
// # The guarantee
//
// Neighbouring inputs are two tables with the same header and the same
// number of rows that differ in one row, every row well-formed, fitted with
// the same Options. Fit's release is (eps, delta)-DP for that relation,
// because every step is a per-row map or depends only on public values:
// the split (datasets.SplitIndex, a function of n, TestFrac and Seed), the
// classes (declared; an undeclared label makes a null row), the
// preprocessing (Bounds and None are per-row maps ending in the unit ball,
// so kappa = 1; Standardize is outside the guarantee, with a WARNING), the
// settings (fixed before the data is read; the automatic knobs read n, d,
// K and the budget only), and the release (the method's proof). Statistics
// of the data exist only in Diagnostics, which is never written.
// docs/DESIGN.md, section 6, holds the proof.
//
// Partitioned training is package partition, private model selection
// package selection, and the model file with its verification package
// modelfile.
package private
