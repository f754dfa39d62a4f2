package experiments

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/experiments/internal/chart"
	"github.com/stabpriv/stabpriv/internal/figure"
)

// lambdaAxis is the x label of the figures against lambda.
const lambdaAxis = "lambda (elastic-net strength, log scale)"

// short formats a number for titles, labels and legends (figure.Short).
func short(v float64) string { return figure.Short(v) }

// spreadLabel is the y label of a unit panel of metric what, with the
// meaning of its error bars.
func spreadLabel(what string, splits int) string {
	if splits < 2 {
		return what + "\n(1 split)"
	}
	return fmt.Sprintf("%s\nmean ± std over %d splits, bars clipped to [0, 1]", what, splits)
}

// majorityRef returns the majority-class line of an accuracy panel (none
// when the rows do not record the majority share).
func majorityRef(st Stat) []chart.Ref {
	if st.N == 0 {
		return nil
	}
	return []chart.Ref{{
		Name: fmt.Sprintf("majority class of the test rows (%.3f)", st.Mean), Y: st.Mean,
		Style: draw.LineStyle{Color: color.Gray{Y: 96}, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(8), vg.Points(4)}},
	}}
}

// fromCurve turns a curve into a named series.
func fromCurve(name string, look int, c curve) chart.Series {
	y := make([]chart.Point, len(c.stats))
	for i, st := range c.stats {
		y[i] = st.point()
	}
	return chart.Series{Name: name, X: c.lambdas, Y: y, Look: look}
}

// mechPhrase says how mechanism m of the summary adds its noise.
func (s Summary) mechPhrase(m string) string {
	if trainingTime(dp.Mechanism(m)) {
		return s.mechLabel(m) + " perturbation, noise in the objective"
	}
	return s.mechLabel(m) + " noise calibrated to the stability sensitivity"
}

// figure1Panels returns the panel of Figure 1.
func figure1Panels(rows []Result) []chart.Panel {
	s := Summarize(rows)
	knobs := ""
	if len(s.Families) > 1 {
		knobs = "\n(the other knobs at their baselines)"
	}
	pn := chart.Panel{
		Title:  fmt.Sprintf("%s: test accuracy against lambda\n%s%s", dataName(s.Dataset, s.DataFile), s.mechPhrase(s.Mechanism), knobs),
		XLabel: lambdaAxis, YLabel: spreadLabel("test accuracy", s.Splits), Unit: true,
		Refs: majorityRef(s.Majority),
	}
	for i, eps := range s.Epsilons {
		pn.Curves = append(pn.Curves, fromCurve("eps = "+short(eps), i, epsilonCurve(rows, s.Mechanism, eps)))
	}
	pn.Curves = append(pn.Curves, fromCurve("non-private", len(s.Epsilons), nonPrivateCurve(rows, s.Mechanism)))
	return []chart.Panel{pn}
}

// Figure1 writes fig1.png: the test accuracy against lambda (log scale), one
// curve per eps and one for the non-private models, mean +- std over the
// splits (the bars clipped to [0, 1]), and the accuracy of always
// predicting the majority class of the test rows.
func Figure1(w io.Writer, rows []Result) error {
	return chart.WritePNG(w, chart.PanelHeight, figure1Panels(rows)...)
}

// figure2Panels returns the panels of Figure 2.
func figure2Panels(rows []Result) ([]chart.Panel, error) {
	s := Summarize(rows)
	if len(s.FixedPoints) == 0 {
		return nil, fmt.Errorf("%w: no fixed-scale rows for Figure 2", ErrConfig)
	}
	fixed := func(r Result) bool { return r.Mode == FixedScale }
	var mech, scale string
	if i := slices.IndexFunc(rows, fixed); i >= 0 {
		mech, scale = rows[i].Mechanism, rows[i].NoiseScaleName
	}
	acc := chart.Panel{
		Title:  fmt.Sprintf("%s: test accuracy against lambda\n%s noise of fixed scale %s = %s", dataName(s.Dataset, s.DataFile), s.mechLabel(mech), scale, short(s.FixedScale)),
		XLabel: lambdaAxis, YLabel: spreadLabel("test accuracy", s.Splits), Unit: true,
		Curves: []chart.Series{
			fromCurve("private, fixed scale", 0, collect(rows, fixed, func(r Result) float64 { return r.AccPrivate })),
			fromCurve("non-private", 1, nonPrivateCurve(rows, mech)),
		},
		Refs: majorityRef(s.Majority),
	}
	eps := chart.Panel{
		Title:  fmt.Sprintf("eps that the fixed scale %s = %s buys\n(Corollary 13: a larger lambda, a more stable run)", scale, short(s.FixedScale)),
		XLabel: lambdaAxis, YLabel: "eps (log scale)", LogY: true,
		Curves: []chart.Series{fromCurve("", 0, collect(rows, fixed, func(r Result) float64 { return r.Epsilon }))},
	}
	return []chart.Panel{acc, eps}, nil
}

// Figure2 writes fig2.png from the fixed-scale rows: on the left the test
// accuracy against lambda at the fixed noise scale (and non-private, and
// the majority-class accuracy), on the right the eps that the fixed scale
// buys at each lambda (the paper's Corollary 13: a more stable run, larger
// lambda, is more private at the same noise). It returns an error when rows
// has no fixed-scale row.
func Figure2(w io.Writer, rows []Result) error {
	panels, err := figure2Panels(rows)
	if err != nil {
		return err
	}
	return chart.WritePNG(w, chart.PanelHeight, panels...)
}

// bestFamily returns the knob family of mechanism m whose frontier has the
// best mean accuracy over the eps (ties: the first of s.Families, lambda
// alone first), among the families with a point at every eps.
func (s Summary) bestFamily(m string) string {
	best, bestMean := FamilyLambda, math.Inf(-1)
	for _, fam := range s.Families {
		var sum float64
		n := 0
		for _, p := range s.Frontier {
			if p.Mechanism == m && p.Family == fam {
				sum += p.Mean
				n++
			}
		}
		if n == len(s.Epsilons) && sum/float64(n) > bestMean {
			best, bestMean = fam, sum/float64(n)
		}
	}
	return best
}

// familyPhrase names what a knob family tunes.
func familyPhrase(fam string) string {
	switch fam {
	case FamilyLambda:
		return "lambda tuned"
	case FamilyAll:
		return "lambda and every knob tuned"
	}
	return "lambda and " + fam + " tuned"
}

// frontierPanel returns the panel of the frontier figure.
func frontierPanel(rows []Result) (chart.Panel, error) {
	s := Summarize(rows)
	if len(s.Frontier) == 0 {
		return chart.Panel{}, fmt.Errorf("%w: no calibrated rows for the frontier", ErrConfig)
	}
	pn := chart.Panel{
		Title:  fmt.Sprintf("%s: privacy-utility frontier\nbest setting per eps, chosen on the test accuracy (optimistic)", dataName(s.Dataset, s.DataFile)),
		XLabel: "eps (privacy budget, log scale)", YLabel: spreadLabel("best mean test accuracy", s.Splits), Unit: true, XAtData: true,
	}
	familyCurve := func(m, fam string) chart.Series {
		var c chart.Series
		for _, p := range s.Frontier {
			if p.Mechanism == m && p.Family == fam {
				c.X, c.Y = append(c.X, p.Epsilon), append(c.Y, p.point())
			}
		}
		return c
	}
	for i, m := range s.Mechanisms {
		fam := s.bestFamily(m)
		c := familyCurve(m, fam)
		c.Name, c.Look = s.mechLabel(m)+", "+familyPhrase(fam), i
		pn.Curves = append(pn.Curves, c)
		if fam != FamilyLambda {
			c := familyCurve(m, FamilyLambda)
			c.Name, c.Look, c.Plain = s.mechLabel(m)+", lambda alone", i, true
			pn.Curves = append(pn.Curves, c)
		}
	}
	if len(s.Selected) > 0 {
		c := chart.Series{Name: "privately selected (setting and pure mechanism)", Look: len(s.Mechanisms)}
		for _, p := range s.Selected {
			c.X, c.Y = append(c.X, p.Epsilon), append(c.Y, p.point())
		}
		pn.Curves = append(pn.Curves, c)
	}
	if np := s.NonPrivate; np.N > 0 {
		pn.Refs = append(pn.Refs, chart.Ref{
			Name: fmt.Sprintf("non-private, best setting (%.3f)", np.Mean), Y: np.Mean,
			Style: draw.LineStyle{Color: color.Black, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}},
		})
	}
	pn.Refs = append(pn.Refs, majorityRef(s.Majority)...)
	return pn, nil
}

// Frontier writes frontier.png, the privacy-utility frontier in one panel:
// the best mean test accuracy against eps (log scale), one curve per
// mechanism for its best knob family (Summary.Families; the best mean over
// the eps) and, when that is not lambda alone, a dotted curve for lambda
// alone; the privately selected releases; the best non-private accuracy
// and the majority-class accuracy. The winning settings are in the summary.
func Frontier(w io.Writer, rows []Result) error {
	pn, err := frontierPanel(rows)
	if err != nil {
		return err
	}
	return chart.WritePNG(w, frontierHeight, pn)
}

// frontierHeight is the height of the frontier figure, which has one
// panel and a long legend.
const frontierHeight = 5 * vg.Inch
