package experiments

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/stabpriv/stabpriv/internal/figure"
	"github.com/stabpriv/stabpriv/perturb"
)

// Size of a panel's plot, its legend excluded (figure.Panel: the legend is
// drawn in a column to the right of the plot).
const (
	panelWidth  = 6 * vg.Inch
	panelHeight = 4.5 * vg.Inch
)

// lambdaAxis is the x label of the figures against lambda.
const lambdaAxis = "lambda (elastic-net strength, log scale)"

// xPad is the factor by which the log axes extend beyond the data.
const xPad = 1.5

// series is one curve of a figure: a mean per x with an error bar of one
// std over the splits.
type series struct {
	name string
	x    []float64
	y    []Stat
	// look indexes plotutil's colors, dashes and shapes.
	look int
	// plain draws the line alone, thin and dotted, without points or
	// error bars: a secondary curve.
	plain bool
}

// refLine is a horizontal line across a panel, a level to read the curves
// against (the majority-class accuracy, for example).
type refLine struct {
	name  string
	y     float64
	style draw.LineStyle
}

// panel is one plot: a title, axis labels, the curves and the reference
// lines. The x axis is logarithmic.
type panel struct {
	title, xlabel, ylabel string
	logY                  bool
	// unit panels show a metric in [0, 1] (an accuracy, an F1): their
	// error bars are clipped to it and so is their y axis.
	unit bool
	// xAtData marks the x axis at the x values of the curves instead of
	// at the decades.
	xAtData bool
	curves  []series
	refs    []refLine
}

// errorXYs adapts a series to the plotter interfaces (XYer, YErrorer) of a
// panel whose axes hold log10 of the data (the y axis when logY): its x
// values are log10(x) + shift, its error bars of one std are clipped to
// [lo, hi], so that a bar at the boundary of the range is one-sided.
//
// The panels draw log10 of the values on linear axes, with ticks labelled
// by the values (figure.Log10Ticks explains why).
type errorXYs struct {
	series
	shift, lo, hi float64
	logY          bool
}

func (s errorXYs) Len() int { return len(s.x) }
func (s errorXYs) XY(i int) (float64, float64) {
	y := s.y[i].Mean
	if s.logY {
		y = math.Log10(y)
	}
	return math.Log10(s.x[i]) + s.shift, y
}
func (s errorXYs) YError(i int) (float64, float64) {
	m, sd := s.y[i].Mean, s.y[i].Std
	return max(0, min(sd, m-s.lo)), max(0, min(sd, s.hi-m))
}

// layer is one plotter of a panel and its legend entry (none when name is
// empty).
type layer struct {
	plot.Plotter
	name   string
	thumbs []plot.Thumbnailer
}

// shifts returns what is added to log10 of the x values of each curve so
// that the error bars of curves at the same x stand apart: the k curves
// with points spread over a quarter of the smallest gap between
// neighbouring x values on the log axis (the padding of the axis when
// there is one x), symmetrically around the true x. Plain curves, and the
// curves of a panel without error bars, are not moved.
func (pn panel) shifts() []float64 {
	out := make([]float64, len(pn.curves))
	k, spread := 0, false
	for _, c := range pn.curves {
		if !c.plain && len(c.x) > 0 {
			k++
			spread = spread || slices.ContainsFunc(c.y, func(st Stat) bool { return st.Std > 0 })
		}
	}
	if k < 2 || !spread || pn.logY {
		return out
	}
	xs := pn.xs()
	gap := 2 * math.Log10(xPad)
	for i := 1; i < len(xs); i++ {
		gap = min(gap, math.Log10(xs[i])-math.Log10(xs[i-1]))
	}
	step := gap / 4 / float64(k-1)
	j := 0
	for i, c := range pn.curves {
		if c.plain || len(c.x) == 0 {
			continue
		}
		out[i] = (float64(j) - float64(k-1)/2) * step
		j++
	}
	return out
}

// layers returns the plotters of the panel in legend order: per curve its
// line, points and error bars, then the reference lines. It returns an
// error for a point that cannot be drawn (x <= 0, or y <= 0 on a log y
// axis, or NaN).
func (pn panel) layers() ([]layer, error) {
	lo, hi := math.Inf(-1), math.Inf(1)
	if pn.unit {
		lo, hi = 0, 1
	}
	shifts := pn.shifts()
	var out []layer
	for i, c := range pn.curves {
		if len(c.x) == 0 {
			continue
		}
		for j := range c.x {
			if !(c.x[j] > 0) || math.IsNaN(c.y[j].Mean) || (pn.logY && !(c.y[j].Mean > 0)) {
				return nil, fmt.Errorf("experiments: plot %q: curve %q has the point (%v, %v)", pn.title, c.name, c.x[j], c.y[j].Mean)
			}
		}
		xy := errorXYs{c, shifts[i], lo, hi, pn.logY}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, fmt.Errorf("experiments: plot %q: %w", pn.title, err)
		}
		line.Color = plotutil.Color(c.look)
		if c.plain {
			line.Width = vg.Points(1)
			line.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
			out = append(out, layer{line, c.name, []plot.Thumbnailer{line}})
			continue
		}
		line.Width = vg.Points(1.5)
		line.Dashes = plotutil.Dashes(c.look)
		points.Color = plotutil.Color(c.look)
		points.Shape = plotutil.Shape(c.look)
		points.Radius = vg.Points(3)
		if !pn.logY {
			bars, err := plotter.NewYErrorBars(xy)
			if err != nil {
				return nil, fmt.Errorf("experiments: plot %q: %w", pn.title, err)
			}
			bars.Color = plotutil.Color(c.look)
			out = append(out, layer{Plotter: bars})
		}
		out = append(out, layer{Plotter: line}, layer{points, c.name, []plot.Thumbnailer{line, points}})
	}
	for _, r := range pn.refs {
		y := r.y
		if pn.logY {
			y = math.Log10(y)
		}
		fn := plotter.NewFunction(func(float64) float64 { return y })
		fn.LineStyle, fn.Samples = r.style, 2
		out = append(out, layer{fn, r.name, []plot.Thumbnailer{fn}})
	}
	return out, nil
}

// build draws the panel into a new plot.Plot and its legend: the curves
// over the reference lines, the y axis of a unit panel inside [0, 1].
// gonum/plot panics on some degenerate inputs; the panic is turned into an
// error.
func (pn panel) build() (p *plot.Plot, legend *plot.Legend, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, legend, err = nil, nil, fmt.Errorf("experiments: plot %q: %v", pn.title, r)
		}
	}()
	layers, err := pn.layers()
	if err != nil {
		return nil, nil, err
	}
	p = plot.New()
	p.Title.Text = pn.title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = pn.xlabel
	p.Y.Label.Text = pn.ylabel
	p.X.Tick.Marker = figure.Log10Ticks{AtData: pn.xAtData, Data: pn.xs()}
	switch {
	case pn.logY:
		var ys []float64
		for _, c := range pn.curves {
			for _, st := range c.y {
				ys = append(ys, st.Mean)
			}
		}
		slices.Sort(ys)
		p.Y.Tick.Marker = figure.Log10Ticks{Data: slices.Compact(ys)}
	case pn.unit:
		p.Y.Tick.Marker = unitTicks{}
	}
	p.Add(plotter.NewGrid())
	l := plot.NewLegend()
	l.Padding = vg.Points(3)
	legend = &l
	// The reference lines under the curves, the legend in layer order.
	for _, under := range []bool{true, false} {
		for _, ly := range layers {
			if _, ok := ly.Plotter.(*plotter.Function); ok == under {
				p.Add(ly.Plotter)
			}
		}
	}
	for _, ly := range layers {
		if ly.name != "" {
			legend.Add(ly.name, ly.thumbs...)
		}
	}
	// Pad the log axes by factors so that the end points are not on the
	// frame.
	p.X.Min -= math.Log10(xPad)
	p.X.Max += math.Log10(xPad)
	if pn.logY {
		p.Y.Min -= math.Log10(xPad)
		p.Y.Max += math.Log10(xPad)
	}
	for _, ly := range layers {
		if fn, ok := ly.Plotter.(*plotter.Function); ok {
			p.Y.Min, p.Y.Max = min(p.Y.Min, fn.F(0)), max(p.Y.Max, fn.F(0))
		}
	}
	if pn.unit {
		// At least 0.05 tall, so that the axis has labelled ticks, padded,
		// and inside [0, 1].
		if p.Y.Max-p.Y.Min < 0.05 {
			mid := (p.Y.Min + p.Y.Max) / 2
			p.Y.Min, p.Y.Max = mid-0.025, mid+0.025
		}
		pad := 0.03 * (p.Y.Max - p.Y.Min)
		p.Y.Min, p.Y.Max = max(0, p.Y.Min-pad), min(1, p.Y.Max+pad)
	}
	if slices.ContainsFunc(pn.shifts(), func(s float64) bool { return s != 0 }) {
		p.X.Label.Text += "\n(curves nudged sideways to keep their error bars apart)"
	}
	return p, legend, nil
}

// xs returns the distinct x values of the curves, in increasing order.
func (pn panel) xs() []float64 {
	var xs []float64
	for _, c := range pn.curves {
		xs = append(xs, c.x...)
	}
	slices.Sort(xs)
	return slices.Compact(xs)
}

// unitTicks marks an axis in [0, 1] at a round step giving at most 8
// labelled ticks (0.2 over [0, 1], 0.05 over [0.6, 0.9]), with a minor tick
// between them.
type unitTicks struct{}

// Ticks implements plot.Ticker.
func (unitTicks) Ticks(min, max float64) []plot.Tick {
	step, prec := 0.2, 1
	for _, s := range []struct {
		step float64
		prec int
	}{{0.01, 2}, {0.02, 2}, {0.05, 2}, {0.1, 1}} {
		if (max-min)/s.step <= 8 {
			step, prec = s.step, s.prec
			break
		}
	}
	var ticks []plot.Tick
	for i := math.Ceil(2 * min / step); i/2*step <= max+1e-12; i++ {
		v := i / 2 * step
		tk := plot.Tick{Value: v}
		if math.Mod(i, 2) == 0 {
			tk.Label = strconv.FormatFloat(v, 'f', prec, 64)
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

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
func majorityRef(st Stat) []refLine {
	if st.N == 0 {
		return nil
	}
	return []refLine{{
		name: fmt.Sprintf("majority class of the test rows (%.3f)", st.Mean), y: st.Mean,
		style: draw.LineStyle{Color: color.Gray{Y: 96}, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(8), vg.Points(4)}},
	}}
}

// writePNG draws the panels side by side, each with its legend to its
// right, and writes them as one PNG image.
func writePNG(w io.Writer, height vg.Length, panels ...panel) error {
	fp := make([]figure.Panel, len(panels))
	for i, pn := range panels {
		p, legend, err := pn.build()
		if err != nil {
			return err
		}
		fp[i] = figure.Panel{Plot: p, Legend: legend, Width: panelWidth}
	}
	if _, err := figure.WritePNG(w, height, fp...); err != nil {
		return fmt.Errorf("experiments: %w", err)
	}
	return nil
}

// fromCurve turns a curve into a named series.
func fromCurve(name string, look int, c curve) series {
	return series{name: name, x: c.lambdas, y: c.stats, look: look}
}

// mechPhrase says how mechanism m of the summary adds its noise.
func (s Summary) mechPhrase(m string) string {
	if trainingTime(perturb.Mechanism(m)) {
		return s.mechLabel(m) + " perturbation, noise in the objective"
	}
	return s.mechLabel(m) + " noise calibrated to the stability sensitivity"
}

// figure1Panels returns the panel of Figure 1.
func figure1Panels(rows []Result) []panel {
	s := Summarize(rows)
	knobs := ""
	if len(s.Families) > 1 {
		knobs = "\n(the other knobs at their baselines)"
	}
	pn := panel{
		title:  fmt.Sprintf("%s: test accuracy against lambda\n%s%s", dataName(s.Dataset, s.DataFile), s.mechPhrase(s.Mechanism), knobs),
		xlabel: lambdaAxis, ylabel: spreadLabel("test accuracy", s.Splits), unit: true,
		refs: majorityRef(s.Majority),
	}
	for i, eps := range s.Epsilons {
		pn.curves = append(pn.curves, fromCurve("eps = "+short(eps), i, epsilonCurve(rows, s.Mechanism, eps)))
	}
	pn.curves = append(pn.curves, fromCurve("non-private", len(s.Epsilons), nonPrivateCurve(rows, s.Mechanism)))
	return []panel{pn}
}

// Figure1 writes fig1.png: the test accuracy against lambda (log scale), one
// curve per eps and one for the non-private models, mean +- std over the
// splits (the bars clipped to [0, 1]), and the accuracy of always
// predicting the majority class of the test rows.
func Figure1(w io.Writer, rows []Result) error {
	return writePNG(w, panelHeight, figure1Panels(rows)...)
}

// figure2Panels returns the panels of Figure 2.
func figure2Panels(rows []Result) ([]panel, error) {
	s := Summarize(rows)
	if len(s.FixedPoints) == 0 {
		return nil, fmt.Errorf("%w: no fixed-scale rows for Figure 2", ErrConfig)
	}
	fixed := func(r Result) bool { return r.Mode == FixedScale }
	var mech, scale string
	if i := slices.IndexFunc(rows, fixed); i >= 0 {
		mech, scale = rows[i].Mechanism, rows[i].NoiseScaleName
	}
	acc := panel{
		title:  fmt.Sprintf("%s: test accuracy against lambda\n%s noise of fixed scale %s = %s", dataName(s.Dataset, s.DataFile), s.mechLabel(mech), scale, short(s.FixedScale)),
		xlabel: lambdaAxis, ylabel: spreadLabel("test accuracy", s.Splits), unit: true,
		curves: []series{
			fromCurve("private, fixed scale", 0, collect(rows, fixed, func(r Result) float64 { return r.AccPrivate })),
			fromCurve("non-private", 1, nonPrivateCurve(rows, mech)),
		},
		refs: majorityRef(s.Majority),
	}
	eps := panel{
		title:  fmt.Sprintf("eps that the fixed scale %s = %s buys\n(Corollary 13: a larger lambda, a more stable run)", scale, short(s.FixedScale)),
		xlabel: lambdaAxis, ylabel: "eps (log scale)", logY: true,
		curves: []series{fromCurve("", 0, collect(rows, fixed, func(r Result) float64 { return r.Epsilon }))},
	}
	return []panel{acc, eps}, nil
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
	return writePNG(w, panelHeight, panels...)
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
func frontierPanel(rows []Result) (panel, error) {
	s := Summarize(rows)
	if len(s.Frontier) == 0 {
		return panel{}, fmt.Errorf("%w: no calibrated rows for the frontier", ErrConfig)
	}
	pn := panel{
		title:  fmt.Sprintf("%s: privacy-utility frontier\nbest setting per eps, chosen on the test accuracy (optimistic)", dataName(s.Dataset, s.DataFile)),
		xlabel: "eps (privacy budget, log scale)", ylabel: spreadLabel("best mean test accuracy", s.Splits), unit: true, xAtData: true,
	}
	familyCurve := func(m, fam string) series {
		var c series
		for _, p := range s.Frontier {
			if p.Mechanism == m && p.Family == fam {
				c.x, c.y = append(c.x, p.Epsilon), append(c.y, p.Stat)
			}
		}
		return c
	}
	for i, m := range s.Mechanisms {
		fam := s.bestFamily(m)
		c := familyCurve(m, fam)
		c.name, c.look = s.mechLabel(m)+", "+familyPhrase(fam), i
		pn.curves = append(pn.curves, c)
		if fam != FamilyLambda {
			c := familyCurve(m, FamilyLambda)
			c.name, c.look, c.plain = s.mechLabel(m)+", lambda alone", i, true
			pn.curves = append(pn.curves, c)
		}
	}
	if len(s.Selected) > 0 {
		c := series{name: "privately selected (setting and pure mechanism)", look: len(s.Mechanisms)}
		for _, p := range s.Selected {
			c.x, c.y = append(c.x, p.Epsilon), append(c.y, p.Stat)
		}
		pn.curves = append(pn.curves, c)
	}
	if np := s.NonPrivate; np.N > 0 {
		pn.refs = append(pn.refs, refLine{
			name: fmt.Sprintf("non-private, best setting (%.3f)", np.Mean), y: np.Mean,
			style: draw.LineStyle{Color: color.Black, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}},
		})
	}
	pn.refs = append(pn.refs, majorityRef(s.Majority)...)
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
	return writePNG(w, frontierHeight, pn)
}

// frontierHeight is the height of the frontier figure, which has one
// panel and a long legend.
const frontierHeight = 5 * vg.Inch
