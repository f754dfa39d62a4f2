package publish

import (
	"fmt"
	"io"
	"strings"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/pdp/report"
)

// printReport writes the report of an analysis written into dir.
func printReport(w io.Writer, r *report.Report, dir string) {
	fmt.Fprintln(w, r.Confidential+".")
	fmt.Fprintf(w, "\nneighbours: %s.\n", r.Neighbours)
	fmt.Fprintf(w, "\nmodel: %s loss, lambda = %g, n = %d training rows, d = %d, K = %d; exact minimizer: ||grad F|| = %.2g after %d Newton steps\n",
		r.Loss, r.Lambda, r.Rows, r.Features, r.Outputs, r.GradNorm, r.Iterations)
	fmt.Fprintf(w, "release: %s, %s = %.6g", r.Mechanism, r.NoiseScaleName, r.NoiseScale)
	if r.Delta > 0 {
		fmt.Fprintf(w, ", delta = %g", r.Delta)
	}
	fmt.Fprintln(w)
	if r.Release != nil {
		printPDPRelease(w, r)
	} else if r.DPEpsilon != nil {
		fmt.Fprintf(w, "worst-case DP eps of the release: %.6g (%s", *r.DPEpsilon, strings.Fields(r.DPNeighbours + " ?")[0])
		if r.DPSensitivity != nil {
			fmt.Fprintf(w, ", sensitivity %.6g", *r.DPSensitivity)
		}
		fmt.Fprint(w, ")")
		if r.WorstCaseEpsilon != nil {
			fmt.Fprintf(w, "; worst-case pDP eps of any target, any data set: %.6g", *r.WorstCaseEpsilon)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "worst-case DP eps of the release: none (see notes)")
	}
	if r.PDPForAllEpsilon != nil {
		fmt.Fprintf(w, "pDP for all targets, this data set (Wang's Figure 1): eps <= %.4g (sensitivity <= %.4g)\n", *r.PDPForAllEpsilon, *r.PDPForAllSensitivity)
	}
	if k := r.Kinds[pdp.KindEstimate]; k > 0 {
		fmt.Fprintf(w, "\nWARNING: %d rows' values are one-step ESTIMATES without a proven bound (they may be a few percent low): the %s loss's second derivative is not Lipschitz (it is not twice differentiable everywhere), per-example clipping acts, or lambda = 0; raise --exact-top to refine more rows exactly\n", k, r.Loss)
	}
	e := r.Epsilon
	fmt.Fprintf(w, "\nper-instance eps over the training rows (remove-one; %s): mean %.4g, median %.4g, p90 %.4g, p99 %.4g, max %.4g\n", kindWords(r.Kinds), e.Mean, e.Median, e.P90, e.P99, e.Max)
	if r.Release != nil {
		printCertified(w, r)
	}
	fmt.Fprintf(w, "moments (Definition 7): E eps = %.4g, E eps^2 = %.4g, E eps^3 = %.4g, E eps^4 = %.4g\n", r.Moments[0], r.Moments[1], r.Moments[2], r.Moments[3])
	if g := r.Generalization; g != nil {
		fmt.Fprintf(w, "generalization (Wang, Proposition 9 and Corollary 12): gap of any loss in [0, 1] <= mean e^{2 eps} - 1 + delta (1 + mean e^eps) = %.4g (series terms 2^j/j! E eps^j: %.3g, %.3g, %.3g, %.3g; a plug-in estimate of the expected gap's bound)\n",
			g.Bound, g.Series[0], g.Series[1], g.Series[2], g.Series[3])
	}
	fmt.Fprintf(w, "sensitivity: median %.4g, max %.4g", r.Sensitivity.Median, r.Sensitivity.Max)
	if r.Exact > 0 {
		fmt.Fprintf(w, "; largest relative one-step error among the %d exact rows %.2g", r.Exact, r.MaxRelOneStepError)
	}
	fmt.Fprintln(w)
	if q := r.ReplaceEpsilon; q != nil {
		fmt.Fprintf(w, "replace-one eps (upper bounds over every replacement): median %.4g, p99 %.4g, max %.4g\n", q.Median, q.P99, q.Max)
	}
	if f := r.FlipToRemove; f != nil {
		fmt.Fprintf(w, "a label-flipped copy moves the minimizer %.3g times as far as removing the row (median over the rows; max %.3g; one-step estimates)\n", f.Median, f.Max)
	}
	if kl := r.OnAverageKL; kl != nil {
		pairs := "each pair's value an upper bound for its pair"
		if kl.Kind != pdp.KindBound {
			pairs = "some pairs' values one-step estimates without a proven bound"
		}
		fmt.Fprintf(w, "on-average KL-privacy of the Gaussian release: ESTIMATE %.4g, standard error %.2g (mean over %d replacements of a training row by a held-out row, %d pairings; %s)\n", kl.KL, kl.StdErr, kl.Pairs, kl.Pairings, pairs)
	}
	if r.Targets != nil {
		fmt.Fprintf(w, "held-out rows as added targets (%s): median eps %.4g, max %.4g\n", kindWords(r.TargetKinds), r.Targets.Median, r.Targets.Max)
	}
	if len(r.Top) > 0 {
		fmt.Fprintln(w, "\nmost exposed rows (id = data row number, from 1 after the header):")
		for _, t := range r.Top {
			fmt.Fprintf(w, "  id %d: eps %.4g, sensitivity %.4g (%s), residual %.4g\n", t.ID, t.Epsilon, t.Sensitivity, t.Kind, t.Residual)
		}
	}
	fmt.Fprintln(w, "\nnotes:")
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  - %s\n", n)
	}
	fmt.Fprintf(w, "\nwritten to %s: pdp.csv, targets.csv, summary.json, pdp.png (confidential)\n", dir)
}

// printPDPRelease writes the model-file part of a report.
func printPDPRelease(w io.Writer, r *report.Report) {
	rel := r.Release
	c := rel.Certified
	fmt.Fprintf(w, "\nmodel file: %s\n  claim: %s\n", rel.ModelFile, rel.Claim)
	fmt.Fprintf(w, "  certified: eps = %g", c.Epsilon)
	if c.Delta > 0 {
		fmt.Fprintf(w, ", delta = %g", c.Delta)
	}
	fmt.Fprintf(w, " (replace-one), Delta = %.6g by route %s\n", rel.Sensitivity, rel.Route)
	fmt.Fprintf(w, "  weights: %s.\n  ||released - w_hat|| = %.4g (||w_hat|| = %.4g; root mean square norm of the noise %.4g)\n", rel.Weights, rel.ReleasedToExact, rel.ExactNorm, rel.NoiseRMSNorm)
	fmt.Fprintf(w, "  neighbours: %s.\n", rel.Neighbours)
}

// printCertified writes the comparison with the certified epsilon.
func printCertified(w io.Writer, r *report.Report) {
	rel := r.Release
	c := rel.Certified
	fmt.Fprintf(w, "against the certified eps %g: %d of %d rows (%.2f%%) below it; worst row id %d: eps %.4g (%.3g of the certified eps), sensitivity %.4g\n",
		c.Epsilon, c.Below, r.Rows, 100*c.ShareBelow, c.Worst.ID, c.Worst.Epsilon, c.WorstRatio, c.Worst.Sensitivity)
	if rel.RemoveOneBound > 0 {
		fmt.Fprintf(w, "every row's sensitivity is at most L/(n lambda) = %.4g (eps %.4g), half the replace-one bound 2L/(n lambda) of the exact minimizer\n", rel.RemoveOneBound, rel.RemoveOneEpsilon)
	}
}

// kindWords says how many values of each kind a count holds.
func kindWords(k map[string]int) string {
	return fmt.Sprintf("%d exact, %d upper bounds, %d estimates", k[pdp.KindExact], k[pdp.KindBound], k[pdp.KindEstimate])
}

// PrintSummary writes the claims of the summary s read from or written to
// path, and its warnings to stderr.
func PrintSummary(w, stderr io.Writer, path string, s *Summary) {
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

// Certify is stabpriv certify for the summary file at path: it verifies
// it (Verify), checks it against the model file at model when given
// (CheckModel; read reads it, nil: modelfile.ReadFile), and prints its
// claims and what was and was not verified. It returns whether the
// summary is private and, when not, why; an error wraps ErrFile for a
// file that does not read or verify.
func Certify(stdout io.Writer, path, model string, read func(string) (*modelfile.Released, error)) (private bool, why string, err error) {
	s, err := ReadFile(path)
	if err != nil {
		return false, "", err
	}
	private, why, err = Verify(s)
	if err != nil {
		return false, "", fmt.Errorf("%s: %w", path, err)
	}
	if model != "" {
		if read == nil {
			read = modelfile.ReadFile
		}
		r, err := read(model)
		if err != nil {
			return false, "", err
		}
		if err := CheckModel(s, r); err != nil {
			return false, "", fmt.Errorf("%s against %s: %w", path, model, err)
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
	PrintSummary(stdout, io.Discard, path, s)
	fmt.Fprintf(stdout, "\nmechanism: %s; %s\nneighbouring: %s\nsensitivity: %s\nreference: %s\nnot covered:\n", s.Certificate.Mechanism, s.Certificate.Composition.Rule, s.Certificate.Neighbouring, s.Certificate.Sensitivity, s.Certificate.Citation)
	for _, a := range s.Certificate.Assumptions {
		fmt.Fprintf(stdout, "  - %s\n", a)
	}
	for _, m := range s.Warnings {
		fmt.Fprintf(stdout, "warning: %s\n", m)
	}
	fmt.Fprintln(stdout, "\nVerified in this file:")
	for _, m := range Checked {
		fmt.Fprintf(stdout, "  - %s\n", m)
	}
	if model != "" {
		fmt.Fprintf(stdout, "  - %s (%s)\n", CheckedModel, model)
	} else if s.Release.WeightsSHA256 != "" {
		fmt.Fprintln(stdout, "  - not against the model file: give it with --model to check the binding")
	}
	fmt.Fprintln(stdout, "Not verified (no file can show it):")
	for _, m := range s.Certificate.NotVerified {
		fmt.Fprintf(stdout, "  - %s\n", m)
	}
	return private, why, nil
}
