package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/cmd/outfile"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/pdp/publish"
	"github.com/stabpriv/stabpriv/pdp/report"
	"github.com/stabpriv/stabpriv/perturb"
)

// summaryFile is the file pdp --publish-epsilon writes into --out.
const summaryFile = "summary.dp.json"

// publishFlags are the flags of pdp's DP summary.
type publishFlags struct {
	epsilon, delta, beta float64
	levels               string
	seed                 uint64
}

// publishFlagNames are the names of the publish flags (they apply with
// and without --model).
var publishFlagNames = []string{"publish-epsilon", "publish-delta", "publish-beta", "publish-levels", "publish-seed"}

// addPublishFlags defines the publish flags on fs.
func addPublishFlags(fs *flag.FlagSet, f *publishFlags) {
	fs.Float64Var(&f.epsilon, "publish-epsilon", 0, "also write "+summaryFile+": a DP summary of the per-instance epsilons (quantile bounds, shares below --publish-levels) with its own certificate, `eps`-DP on top of the release (publishable; everything else stays confidential)")
	fs.Float64Var(&f.delta, "publish-delta", 0, "`delta` in [0, 1) of the summary, below 1/n for n training rows (used when zCDP composition of its draws beats basic composition)")
	fs.Float64Var(&f.beta, "publish-beta", publish.DefaultBeta, "probability in (0, 1) that any claim of the summary fails")
	fs.StringVar(&f.levels, "publish-levels", "0.01,0.1,1", "comma-separated epsilon `levels`: the summary bounds the share of rows whose per-instance epsilon is at most each")
	fs.Uint64Var(&f.seed, "publish-seed", 0, "draw the summary from a generator seeded with `N` (reproducible, published, NOT private); default: the secure source")
}

// publishSettings are the checked publish flags; nil when not publishing.
type publishSettings struct {
	cfg  publish.Config
	src  perturb.Source
	seed *uint64
	// stderr receives the summary's warnings.
	stderr io.Writer
}

// settings checks the publish flags (set: the flags given); the
// summary's warnings will go to stderr.
func (f *publishFlags) settings(set map[string]bool, stderr io.Writer) (*publishSettings, error) {
	if !set["publish-epsilon"] {
		for _, name := range publishFlagNames[1:] {
			if set[name] {
				return nil, usagef("--%s applies with --publish-epsilon", name)
			}
		}
		return nil, nil
	}
	if err := (dp.Budget{Epsilon: f.epsilon, Delta: f.delta}).Validate(); err != nil {
		return nil, usagef("--publish-epsilon %v --publish-delta %v: %w", f.epsilon, f.delta, err)
	}
	if !check.OpenUnit(f.beta) {
		return nil, usagef("--publish-beta %v: beta = %v, want in (0, 1)", f.beta, f.beta)
	}
	var levels []float64
	for _, s := range strings.Split(f.levels, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, usagef("--publish-levels %q: %q is not a number", f.levels, s)
		}
		levels = append(levels, v)
	}
	ps := &publishSettings{cfg: publish.Config{Epsilon: f.epsilon, Delta: f.delta, Beta: f.beta, Levels: levels}, src: perturb.Secure(), stderr: stderr}
	if set["publish-seed"] {
		seed := f.seed
		ps.src, ps.seed = perturb.Seeded(seed), &seed
	}
	if err := ps.cfg.Budget().Check(); err != nil {
		return nil, usagef("--publish-*: %w", err)
	}
	return ps, nil
}

// standardizedFix names the ways to a summary that is private for the
// table.
const standardizedFix = "use --standardize none (rows clipped into the unit ball), or train the model with declared or estimated bounds " +
	"(stabpriv train --bounds FILE, --bounds-all lo,hi or --bounds-share) and summarize it with pdp --model"

// checkSimulation refuses, before any work, a summary of a simulated
// release that has no data-independent bound on a row's influence: lambda
// = 0, rows whose norm bound is assumed rather than enforced, or rows
// standardized with their own statistics (replacing one row changes every
// row, which no summary's neighbourhood covers).
func (ps *publishSettings) checkSimulation(lambda float64, standardize, bias string) error {
	switch {
	case ps == nil:
		return nil
	case lambda == 0:
		return usagef("--publish-epsilon with --lambda 0: %v (a summary needs lambda > 0: strong convexity bounds every row's influence)", pdp.ErrNotPublishable)
	case standardize == "train":
		return usagef("--publish-epsilon with --standardize train: %v (the features are standardized with statistics of the training rows: replacing one row changes every row, so no summary of them is private for the table); %s", pdp.ErrNotPublishable, standardizedFix)
	case standardize == "none" && bias == "false":
		return usagef("--publish-epsilon with --standardize none --bias false: %v (the rows are kept as they are, so their norm bound is assumed, not enforced)", pdp.ErrNotPublishable)
	}
	return nil
}

// outFiles returns the files pdp writes into --out.
func (ps *publishSettings) outFiles() []string {
	if ps == nil {
		return pdpFiles
	}
	return append(append([]string(nil), pdpFiles...), summaryFile)
}

// summarizePDP draws the DP summary of the analysis. A budget the rows
// cannot take (a delta at or above 1/n) is a usage error.
func summarizePDP(res *report.Result, ps *publishSettings) (*publish.Summary, error) {
	p, err := res.Publishable()
	if err != nil {
		return nil, &usageError{Err: fmt.Errorf("--publish-epsilon: %w", err)}
	}
	s, err := publish.Summarize(p, ps.cfg, ps.src, ps.seed)
	if errors.Is(err, dp.ErrBudget) {
		return nil, usagef("--publish-delta %v: %w", ps.cfg.Delta, err)
	}
	return s, err
}

// writeSummary writes the summary into dir, readable by all: it is the
// one publishable file of pdp's output. An existing file is replaced only
// with force.
func writeSummary(dir string, s *publish.Summary, force bool) error {
	return outfile.Write(filepath.Join(dir, summaryFile), force, s.Write)
}

// printSummary prints the summary's claims, and its warnings to stderr.
func printSummary(w, stderr io.Writer, path string, s *publish.Summary) {
	c := s.Certificate
	status := "PUBLISHABLE"
	switch {
	case s.Release.StandardizedOnRows:
		status = "NOT PRIVATE FOR THE TABLE: rows standardized with their own statistics, do not publish"
	case !c.Private:
		status = "NOT PRIVATE: seeded draws, for tests"
	}
	fmt.Fprintf(w, "\nDP summary (%s, %s): (%g, %g)-DP for replace-one neighbours, on top of the release; %s; source %s\n",
		path, status, c.Epsilon, c.Delta, s.Derived.CompositionRule, c.Source)
	if r := s.Release; r.WeightsSHA256 != "" {
		fmt.Fprintf(w, "  release: the model file with weights SHA-256 %s, certified (%g, %g)-DP; together with it (%g, %g)-DP by composition\n",
			r.WeightsSHA256, r.ReleaseEpsilon, r.ReleaseDelta, r.ReleaseEpsilon+c.Epsilon, r.ReleaseDelta+c.Delta)
	} else {
		fmt.Fprintln(w, "  release: simulated (no model file; the summary is bound to no published weights)")
	}
	fmt.Fprintf(w, "  every row: eps <= %.4g (worst case, no budget)", s.Derived.WorstCaseEpsilon)
	if s.Derived.Queries > 0 {
		fmt.Fprintf(w, "; each claim below holds with probability >= %.4g", 1-s.Derived.QueryBeta)
	}
	fmt.Fprintln(w)
	for _, q := range s.Quantiles {
		name := fmt.Sprintf("quantile %g", q.Q)
		if q.Q == 1 {
			name = "maximum"
		}
		if !q.Bounded {
			fmt.Fprintf(w, "  %s: not bounded at this budget (ceil(q n) plus the rank slack %d exceeds n = %d; only the worst case eps <= %.4g holds)\n", name, s.Derived.QuantileSlack, s.Release.N, q.EpsilonAtMost)
			continue
		}
		fmt.Fprintf(w, "  %s: at least %d of %d rows (%.2f%%) have eps <= %.4g\n", name, q.RowsAtLeast, s.Release.N, 100*q.ShareAtLeast, q.EpsilonAtMost)
	}
	for _, l := range s.Levels {
		fmt.Fprintf(w, "  level %g: at least %d of %d rows (%.2f%%) have eps <= %g\n", l.Epsilon, l.RowsAtLeast, s.Release.N, 100*l.ShareAtLeast, l.Epsilon)
	}
	for _, m := range s.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", m)
	}
	// Not in the file's warnings, which files written before it lack.
	if m := (dp.Budget{Epsilon: s.Budget.Epsilon, Delta: s.Budget.Delta}).DeltaWarning(s.Release.N, "training row"); m != "" {
		fmt.Fprintf(stderr, "warning: %s\n", m)
	}
}

// isSummaryFile reports whether path is a regular file that begins like a
// summary file.
func isSummaryFile(path string) bool {
	return publish.IsSummaryFile(path)
}

// certifySummary is certify for a summary file: it verifies it
// (publish.Verify), checks it against the model file at model when given
// (publish.CheckModel), and prints its claims and what was and was not
// verified.
func certifySummary(stdout io.Writer, path, model string) error {
	s, err := publish.ReadFile(path)
	if err != nil {
		return err
	}
	private, why, err := publish.Verify(s)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if model != "" {
		r, err := readModel(model)
		if err != nil {
			return err
		}
		if err := publish.CheckModel(s, r); err != nil {
			return fmt.Errorf("%s against %s: %w", path, model, err)
		}
	}
	switch {
	case private:
		fmt.Fprintln(stdout, "VERIFIED DP SUMMARY: the file equals the summary its published inputs and draws give (its provenance cannot be checked)")
	case s.Release.StandardizedOnRows:
		fmt.Fprintf(stdout, "NOT PRIVATE FOR THE TABLE: %s\n", strings.TrimPrefix(why, "NOT PRIVATE FOR THE TABLE: "))
	default:
		fmt.Fprintf(stdout, "NOT A PRIVATE SUMMARY: %s\n", why)
	}
	printSummary(stdout, io.Discard, path, s)
	fmt.Fprintf(stdout, "\nmechanism: %s; %s\nneighbouring: %s\nsensitivity: %s\nreference: %s\nnot covered:\n", s.Certificate.Mechanism, s.Certificate.Composition.Rule, s.Certificate.Neighbouring, s.Certificate.Sensitivity, s.Certificate.Citation)
	for _, a := range s.Certificate.Assumptions {
		fmt.Fprintf(stdout, "  - %s\n", a)
	}
	for _, m := range s.Warnings {
		fmt.Fprintf(stdout, "warning: %s\n", m)
	}
	fmt.Fprintln(stdout, "\nVerified in this file:")
	for _, m := range publish.Checked {
		fmt.Fprintf(stdout, "  - %s\n", m)
	}
	if model != "" {
		fmt.Fprintf(stdout, "  - %s (%s)\n", publish.CheckedModel, model)
	} else if s.Release.WeightsSHA256 != "" {
		fmt.Fprintln(stdout, "  - not against the model file: give it with --model to check the binding")
	}
	fmt.Fprintln(stdout, "Not verified (no file can show it):")
	for _, m := range s.Certificate.NotVerified {
		fmt.Fprintf(stdout, "  - %s\n", m)
	}
	if !private {
		return &notPrivateError{why}
	}
	return nil
}
