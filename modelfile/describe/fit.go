package describe

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dppca"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/privbounds"
	"github.com/stabpriv/stabpriv/release/autoknobs"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/stump"
	"github.com/stabpriv/stabpriv/trainer"
)

// g6 formats v with 6 significant digits.
func g6(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// StumpWords describes the released stump of r: the column it decides on
// and the class of each side (for a multiclass stump, K outputs, the
// classes above, below and at the threshold, as the argmax decides). A
// numeric feature with bounds is named by its column, with the threshold
// in the column's own units (from its public bounds); a one-hot input by
// "column" = "category", with the class of the rows of that category
// (z = 1) and of the others (z = 0, an undeclared value included), each
// from the stump's own prediction. Another input is named by its index
// among the mapped inputs. A pair and an interval of the larger classes
// are described alike (pairWords, intervalWords).
func StumpWords(r *modelfile.Released) string {
	classes := r.Schema.Classes
	var st stump.Multi // a binary stump as the pair (Lo, Hi) of its sides
	T := stump.MultiGrid
	rest, tie := "", 1 // tie: the class at z = t (+1 for a binary stump)
	if r.Model.K > 1 {
		m, err := stump.MultiFromWeights(r.Model.W, r.Model.K, stump.MultiGrid)
		if err != nil {
			if v, verr := stump.IntervalFromWeights(r.Model.W, r.Model.K, stump.MultiGrid); verr == nil {
				return intervalWords(r, v)
			}
			return err.Error()
		}
		st, tie = m, min(m.Lo, m.Hi)
		rest = fmt.Sprintf("class %s when z > t, %s when z < t, %s at t", classes[m.Hi], classes[m.Lo], classes[min(m.Lo, m.Hi)])
	} else {
		b, err := stump.FromWeights(r.Model.W, stump.DefaultGrid)
		if err != nil {
			if c, perr := stump.BinaryFromWeights(r.Model.W, stump.DefaultGrid, true); perr == nil && c.Pair != nil {
				return pairWords(r, *c.Pair)
			}
			return err.Error()
		}
		st, T = stump.Multi{Feature: b.Feature, Index: b.Index, Lo: 0, Hi: 1}, stump.DefaultGrid
		side := ">="
		if b.Sign < 0 {
			st.Lo, st.Hi, side = 1, 0, "<="
		}
		rest = fmt.Sprintf("class %s when z %s t, else %s", classes[1], side, classes[0])
	}
	t := stump.Threshold(st.Index, T)
	what := fmt.Sprintf("mapped input %d", st.Feature)
	column, category, num := stumpInput(r.Preprocessing, st.Feature)
	p := r.Preprocessing
	switch {
	case category != "":
		// z is 1 for the category and 0 otherwise; the stump's class at
		// each (a side of the threshold t, which lies in (-1, 1)).
		class := func(z float64) string {
			switch {
			case z > t:
				return classes[st.Hi]
			case z < t:
				return classes[st.Lo]
			}
			return classes[tie]
		}
		rest = fmt.Sprintf("class %s when %q = %q, else %s", class(1), column, category, class(0))
		if class(1) == class(0) {
			rest = fmt.Sprintf("class %s whatever %q is", class(1), column)
		}
		return fmt.Sprintf("one-hot input %d of column %q (z = 1 when it is %q, else 0; t = %s): %s", st.Feature, column, category, g6(t), rest)
	case column != "":
		if v, ok := rawThreshold(p, num, t); ok {
			what = fmt.Sprintf("feature %q, threshold %s in its units", column, g6(v))
		}
	}
	return fmt.Sprintf("%s (z = %s): %s", what, g6(t), rest)
}

// rawThreshold returns the value of numeric feature num (its index among
// the numeric features, that of p.Lo and p.Hi) whose map z is t: the
// inverse of the monotone map of the Bounds mode, linear or log, so that
// a threshold on z reads in the column's units. ok is false without
// bounds for that feature.
func rawThreshold(p *preprocess.RowMap, num int, t float64) (v float64, ok bool) {
	if p == nil || num < 0 || num >= len(p.Lo) || num >= len(p.Hi) {
		return 0, false
	}
	lo, hi := p.Lo[num], p.Hi[num]
	if p.Log > 0 {
		// z = g((x - m)/s)/W: the raw threshold is m + s g^-1(t W),
		// g^-1(u) = sign(u) (2^|u| - 1).
		u := t * p.Log
		return (lo/2 + hi/2) + (hi/2-lo/2)*math.Copysign(math.Exp2(math.Abs(u))-1, u), true
	}
	return lo + (t+1)*(hi-lo)/2, true
}

// pairWords describes a released pair (stump.Pair): the two mapped inputs
// whose difference it thresholds, by column (and category for a one-hot
// input), and the class of each side. On the public log map (m = 0,
// s = 1: z = g(x)/W) the difference of two numeric columns is
// log2((1 + x_a)/(1 + x_b))/W for values >= 0, so the pair also reads as
// a bound on that ratio in the columns' units.
func pairWords(r *modelfile.Released, q stump.Pair) string {
	p := r.Preprocessing
	name := func(i int) string {
		column, category, _ := stumpInput(p, i)
		switch {
		case column == "":
			return fmt.Sprintf("mapped input %d", i)
		case category != "":
			return fmt.Sprintf("column %q = %q", column, category)
		}
		return fmt.Sprintf("column %q", column)
	}
	side := ">="
	if q.Sign < 0 {
		side = "<="
	}
	classes := r.Schema.Classes
	t := stump.Threshold(q.Index, stump.DefaultGrid)
	rest := fmt.Sprintf("class %s when z_%d - z_%d %s t, else %s", classes[1], q.A, q.B, side, classes[0])
	ca, cata, na := stumpInput(p, q.A)
	cb, catb, nb := stumpInput(p, q.B)
	if ca != "" && cb != "" && cata == "" && catb == "" && publicLog(p, na) && publicLog(p, nb) {
		rest = fmt.Sprintf("class %s when (1 + %s)/(1 + %s) %s %s (for values >= 0; z_%d - z_%d %s t on the map), else %s",
			classes[1], ca, cb, side, g6(math.Exp2(t*p.Log)), q.A, q.B, side, classes[0])
	}
	return fmt.Sprintf("the difference of %s and %s, t = %s: %s", name(q.A), name(q.B), g6(t), rest)
}

// publicLog reports whether numeric feature num is read on the public log
// map z = clamp(g(x)/W, -1, 1) (centre 0, spread 1, W =
// privbounds.PublicHalfWidth: the clamp binds only beyond 2^32 - 1).
func publicLog(p *preprocess.RowMap, num int) bool {
	lo, hi, w := privbounds.PublicRange()
	return p != nil && !p.Estimated && p.Log == w && num < len(p.Lo) && num < len(p.Hi) && p.Lo[num] == lo && p.Hi[num] == hi
}

// intervalWords describes a released interval (stump.Interval): its
// column, the class of each interval and its two thresholds, in the
// column's units for a numeric column with bounds (rawThreshold) and on
// the map z otherwise; for a one-hot input, the class of the rows of its
// category (z = 1) and of the others (z = 0).
func intervalWords(r *modelfile.Released, v stump.Interval) string {
	c := r.Schema.Classes
	t1, t2 := stump.Threshold(v.Lo, stump.MultiGrid), stump.Threshold(v.Hi, stump.MultiGrid)
	column, category, num := stumpInput(r.Preprocessing, v.Feature)
	at := func(z float64) string {
		x := make([]float64, v.Feature+1)
		x[v.Feature] = z
		return c[v.Predict(x, stump.MultiGrid)]
	}
	switch {
	case column == "":
		return fmt.Sprintf("three intervals of mapped input %d: class %s when z < %s, %s between, %s when z > %s",
			v.Feature, c[v.A], g6(t1), c[v.B], c[v.C], g6(t2))
	case category != "":
		return fmt.Sprintf("three intervals of column %q = %q (z = 1 when it is %q, else 0; t1 = %s, t2 = %s): class %s when it is, else %s",
			column, category, category, g6(t1), g6(t2), at(1), at(0))
	}
	x1, ok1 := rawThreshold(r.Preprocessing, num, t1)
	x2, ok2 := rawThreshold(r.Preprocessing, num, t2)
	if !ok1 || !ok2 {
		return fmt.Sprintf("three intervals of column %q (z = its mapped value): class %s when z < %s, %s between, %s when z > %s",
			column, c[v.A], g6(t1), c[v.B], c[v.C], g6(t2))
	}
	return fmt.Sprintf("three intervals of column %q, thresholds %s and %s in its units (z = %s and %s): class %s below %s, %s between, %s above %s (at a threshold, the one declared first)",
		column, g6(x1), g6(x2), g6(t1), g6(t2), c[v.A], g6(x1), c[v.B], c[v.C], g6(x2))
}

// stumpInput returns what mapped input i of the per-feature map of p holds
// (the features in order, a numeric one as one input, a categorical one as
// one indicator per declared category): its column, the category for a
// one-hot input ("" for a numeric one) and, for a numeric one, its index
// among the numeric features (that of p.Lo and p.Hi). The column is ""
// when i is past the features (the bias) or p is nil.
func stumpInput(p *preprocess.RowMap, i int) (column, category string, num int) {
	if p == nil || i < 0 {
		return "", "", 0
	}
	off := 0
	for _, f := range p.Features {
		var values []string
		for _, c := range p.Categories {
			if c.Column == f {
				values = c.Values
				break
			}
		}
		switch {
		case values == nil && off == i:
			return f, "", num
		case values == nil:
			num++
			off++
		case i < off+len(values):
			return f, values[i-off], 0
		default:
			off += len(values)
		}
	}
	return "", "", 0
}

// Run is what the words of a fit say about its run beyond the model file:
// where the rows came from and how the noise was drawn.
type Run struct {
	// Source names the table (datasets.Table.Source); Shards is the
	// number of shards of a partitioned run and Pattern the glob that
	// matched them (named when Shards > 1).
	Source  string
	Shards  int
	Pattern string
	// NoiseSeed is the seed of seeded noise, published in the words of a
	// release that is not private.
	NoiseSeed uint64
	// Auto reports that the knobs were the mechanism's automatic ones
	// (its rule is then named).
	Auto bool
}

// Fit writes the outcome of a fit, as stabpriv train prints it: for a
// release, the release and its certificate first, then the public
// stability analysis, and the non-private statistics only when r has them
// (--diagnostics); for a non-private fit the metrics, the constants and
// the analysis.
func Fit(w io.Writer, s Run, r *modelfile.Released) error {
	if r.Certificate != nil {
		if err := printRelease(w, s, r); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "NOT PRIVATE: --mechanism none; the weights below are released as trained, without a privacy guarantee\n\n")
		printData(w, s, r)
		if err := printConstants(w, r.Run, r.Diagnostics); err != nil {
			return err
		}
	}
	if r.Stability != nil { // nil for objective perturbation, which has no stability route
		if err := printStability(w, r.Stability); err != nil {
			return err
		}
		if p, c := r.Partitions, r.Certificate; p != nil && c != nil {
			unit := "one row"
			if p.MaxRowsPerID > 0 {
				unit = fmt.Sprintf("all the rows of one privacy ID (c = %d)", p.MaxRowsPerID)
			}
			fmt.Fprintf(w, "  (the analysis above is the reference run's, one row of all n; the release is calibrated to the partitioned bound for %s, Delta = %s, route %s: see the certificate)\n",
				unit, g6(c.L2Sensitivity), c.SensitivityRoute)
		}
	}
	if r.Certificate != nil && r.Diagnostics != nil {
		return printDiagnostics(w, r)
	}
	return nil
}

// printRelease writes the key numbers of the release and its certificate.
func printRelease(w io.Writer, s Run, r *modelfile.Released) error {
	c := r.Certificate
	claim := fmt.Sprintf("%g-DP (pure)", c.Epsilon)
	if c.Delta > 0 {
		claim = fmt.Sprintf("(%g, %g)-DP", c.Epsilon, c.Delta)
	}
	source := s.Source
	if s.Shards > 1 {
		source = fmt.Sprintf("the %d shards %s", s.Shards, s.Pattern)
	}
	switch {
	case r.Private && r.Partitions != nil && r.Partitions.PrivacyID != "":
		fmt.Fprintf(w, "PRIVATE RELEASE: %s, %s with respect to the rows of each privacy ID (column %s, at most %d rows kept per ID) of %s (replace-one ID; the set of IDs is public)\n", c.Mechanism, claim, r.Partitions.PrivacyID, r.Partitions.MaxRowsPerID, source)
	case r.Private:
		fmt.Fprintf(w, "PRIVATE RELEASE: %s, %s with respect to the rows of %s (replace-one)\n", c.Mechanism, claim, source)
	case c.Private:
		fmt.Fprintf(w, "NOT PRIVATE FOR THE TABLE: %s, %s for the standardized rows only; the standardization statistics fitted on %s are in the model file and are not private\n", c.Mechanism, claim, source)
	default:
		fmt.Fprintf(w, "NOT PRIVATE: %s noise from the seeded source, seed %d (published): anyone can subtract the noise; the calibration is that of %s\n", c.Mechanism, s.NoiseSeed, claim)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	row := func(name, value string) { fmt.Fprintf(tw, "  %s\t%s\n", name, value) }
	row("weights", fmt.Sprintf("%d (%d x %d, %s loss), SHA-256 %s", c.Dim, r.Model.K, r.Model.D, r.Model.Loss, c.WeightsSHA256))
	if c.Mechanism == perturb.Stump {
		row("sensitivity", c.SensitivityRoute)
		row("stump", StumpWords(r))
	} else {
		row("sensitivity", fmt.Sprintf("Delta = %s (route %s), beta = %s", g6(c.L2Sensitivity), c.SensitivityRoute, g6(c.Beta)))
		row("noise scale", fmt.Sprintf("%s = %s", c.NoiseScaleName, g6(c.NoiseScale)))
		row("knobs", fmt.Sprintf("lambda = %s, l1 ratio = %s, clip G = %s, schedule %s, %d passes, batch %d", g6(c.Lambda), g6(c.L1Ratio), g6(c.Clip), c.Schedule, c.Passes, c.Batch))
	}
	if (s.Auto || r.AutoKnobs && r.Selection == nil) && c.Mechanism != perturb.Stump {
		k, err := autoknobs.Choose(r.Split.TrainRows, r.Model.D, r.Model.K, c.Mechanism, r.ReleaseBudget())
		if p := r.Partitions; err == nil && p != nil && p.PrivacyID != "" && p.MaxRowsPerID > 1 {
			k.Rule = fmt.Sprintf("sqrt(c) = %.4g times the rule's lambda for rows (a privacy ID moves c = %d rows: the rule at c times the sensitivity): %s", autoknobs.GroupScale(p.MaxRowsPerID), p.MaxRowsPerID, k.Rule)
		}
		if err == nil {
			row("knob rule", k.Rule)
		}
	}
	if sel := r.Selection; sel != nil && sel.Skipped {
		row("selection", fmt.Sprintf("%s: tuning skipped, too noisy to tell the %d candidates apart (a public forecast): the rule's %s, trained on %d rows",
			sel.Method, len(sel.Settings), sel.Settings[sel.Chosen], sel.ReleaseRows))
	} else if sel != nil {
		row("selection", fmt.Sprintf("%s: chose %s among %d candidates (tuned on %d rows, scored on %d; the release trained on %d)",
			sel.Method, sel.Settings[sel.Chosen], len(sel.Settings), sel.TuneRows, sel.ValRows, sel.ReleaseRows))
	}
	row("preprocessing", r.Preprocessing.Words)
	b := r.ReleaseBudget()
	for _, ch := range c.Ledger {
		switch {
		case ch.Step == privbounds.Step && r.Preprocessing.Estimated:
			row("bounds", fmt.Sprintf("estimated privately at eps = %s of the %s (the release: eps = %s); listed in the certificate", g6(ch.Epsilon), g6(c.Epsilon), g6(b.Epsilon)))
		case ch.Step == dppca.Step && r.Preprocessing.PCA != nil:
			row("components", fmt.Sprintf("%d principal directions computed privately at (eps, delta) = (%s, %s) of (%s, %s) (the release: (%s, %s)); in the model file, SHA-256 %s",
				len(r.Preprocessing.PCA.V), g6(ch.Epsilon), g6(ch.Delta), g6(c.Epsilon), g6(c.Delta), g6(b.Epsilon), g6(b.Delta), c.ComponentsSHA256))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	_, err := io.WriteString(w, c.String())
	return err
}

// printData writes the data and the metrics of a non-private fit.
func printData(w io.Writer, s Run, r *modelfile.Released) {
	fmt.Fprintf(w, "data:   %s (label %q, %d rows, %d for training)\n", s.Source, r.Schema.Label, r.Split.Rows, r.Split.TrainRows)
	fmt.Fprintf(w, "model:  %s loss, %s task", r.Model.Loss, r.Model.Task)
	if c := r.Schema.Classes; len(c) == 2 && r.Model.K == 1 {
		fmt.Fprintf(w, " (%s = -1, %s = +1)", c[0], c[1])
	} else if len(c) > 0 {
		fmt.Fprintf(w, ", %d classes", len(c))
	}
	fmt.Fprintln(w)
	if d := r.Diagnostics; d != nil {
		fmt.Fprintf(w, "train %s: %.4f (%d rows)\n", d.TrainedTrain.Name, d.TrainedTrain.Value, d.TrainedTrain.Rows)
		if d.TrainedTest.Rows > 0 {
			fmt.Fprintf(w, "test %s:  %.4f (%d rows)\n", d.TrainedTest.Name, d.TrainedTest.Value, d.TrainedTest.Rows)
		}
	}
	fmt.Fprintf(w, "preprocessing: %s\n", r.Preprocessing.Words)
}

// printConstants writes the constants of a non-private run and the
// statistics of its data.
func printConstants(w io.Writer, run *trainer.Run, d *modelfile.Diagnostics) error {
	fmt.Fprintln(w, "\nconstants of the run:")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	row := func(name, value string) { fmt.Fprintf(tw, "  %s\t%s\n", name, value) }
	row("n, d, K", fmt.Sprintf("%d, %d, %d (training rows, inputs with the bias, outputs)", run.N, run.D, run.K))
	row("kappa", g6(run.Kappa)+" (row bound ||x|| <= kappa, enforced)")
	row("L, beta_s", fmt.Sprintf("%s, %s (Lipschitz and smoothness constants of the loss in w)", g6(run.L), g6(run.BetaS)))
	row("lambda, l1_ratio, mu", fmt.Sprintf("%s, %s, %s", g6(run.Lambda), g6(run.L1Ratio), g6(run.Mu)))
	row("eta", g6(run.Eta)+" ("+run.Schedule+" schedule; first step)")
	row("k, b", fmt.Sprintf("%d passes, batch %d", run.Passes, run.Batch))
	row("G, s, R", fmt.Sprintf("clip %s, dropout %s, radius %s", g6(run.Clip), g6(run.Dropout), g6(run.Radius)))
	row("averaging, engine, seed", fmt.Sprintf("%v, %s, %d", run.Average, run.Engine, run.Seed))
	if d != nil {
		statsRows(row, d)
	}
	return tw.Flush()
}

// printStability writes beta, Delta, the chosen route and every route with
// its bound or the reason it does not apply.
func printStability(w io.Writer, rep *stability.Report) error {
	fmt.Fprintf(w, "\nstability, from the constants of the run (public; neighbours: %s):\n", rep.Neighbours)
	if rep.Chosen == 0 {
		fmt.Fprintln(w, "  no route applies: the trained weights have no sensitivity bound and cannot be released privately")
	} else {
		fmt.Fprintf(w, "  beta  = %.6g  uniform stability in the loss (beta = L*Delta)\n", rep.Beta)
		fmt.Fprintf(w, "  Delta = %.6g  L2 sensitivity of the weights, route %v\n", rep.Delta, rep.Chosen)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  route\tDelta\tbeta\tbound, or why the route does not apply")
	for _, e := range rep.Routes {
		if !e.Applies {
			fmt.Fprintf(tw, "  %v\t-\t-\tnot applicable: %s\n", e.Route, e.Reason)
			continue
		}
		mark := ""
		if e.Route == rep.Chosen {
			mark = " (chosen)"
		}
		fmt.Fprintf(tw, "  %v%s\t%.6g\t%.6g\t%s\n", e.Route, mark, e.Delta, e.Beta, e.Formula)
	}
	return tw.Flush()
}

// printDiagnostics writes the non-private statistics of a release.
func printDiagnostics(w io.Writer, r *modelfile.Released) error {
	d := r.Diagnostics
	fmt.Fprintln(w, "\nDIAGNOSTICS: statistics of the data computed in the clear, not covered by the certificate. Do not publish.")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	row := func(name, value string) { fmt.Fprintf(tw, "  %s\t%s\n", name, value) }
	metric := func(m modelfile.Metric) string {
		if m.Rows == 0 {
			return "-"
		}
		return fmt.Sprintf("%.4f (%d rows)", m.Value, m.Rows)
	}
	name := d.ReleasedTrain.Name
	row("released, train "+name, metric(d.ReleasedTrain))
	row("released, test "+name, metric(d.ReleasedTest))
	row("trained, train "+name, metric(d.TrainedTrain))
	row("trained, test "+name, metric(d.TrainedTest))
	if d.MajorityTrain.Rows > 0 {
		row("majority class, train", metric(d.MajorityTrain))
		row("majority class, test", metric(d.MajorityTest))
	}
	statsRows(row, d)
	return tw.Flush()
}

// statsRows writes the statistics of the run.
func statsRows(row func(name, value string), d *modelfile.Diagnostics) {
	st := d.Stats
	row("passes done", strconv.Itoa(st.PassesDone))
	if st.Objective == 0 && st.GradNorm != 0 {
		// F_S >= 0 is 0 only at a minimizer, where the gradient is 0:
		// the run did not compute it (a solver's release).
		row("objective", "- (not computed by the solver)")
	} else {
		row("objective", g6(st.Objective)+" (F_S at the trained weights)")
	}
	row("grad norm", g6(st.GradNorm)+" (minimum-norm subgradient of F_S; for a solver, of the objective it minimized)")
	row("rows clipped by the trainer", strconv.Itoa(st.ClippedRows))
	row("null rows (label not declared)", strconv.Itoa(d.NullRows))
	row("time", st.Duration.String())
	if len(d.Classes) > 0 {
		row("labels seen", strings.Join(d.Classes, ", "))
	}
}
