package experiments

import (
	"fmt"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Size of one figure panel.
const (
	panelWidth  = 6 * vg.Inch
	panelHeight = 4 * vg.Inch
)

// series is one curve of a figure: a mean per x with a std error bar.
type series struct {
	name string
	x    []float64
	y    []Stat
}

// errorXYs adapts a series to the plotter interfaces (XYer, YErrorer).
type errorXYs series

func (s errorXYs) Len() int                        { return len(s.x) }
func (s errorXYs) XY(i int) (float64, float64)     { return s.x[i], s.y[i].Mean }
func (s errorXYs) YError(i int) (float64, float64) { return s.y[i].Std, s.y[i].Std }

// panel is one plot: a title, axis labels, log scales and the curves.
type panel struct {
	title, xlabel, ylabel string
	logY                  bool
	curves                []series
}

// legendCorner returns the corner of the panel (top, left) whose quarter
// (a third of the width and half the height) holds the fewest points and
// error bars of the curves, so that the legend hides as little as possible.
func (pn panel) legendCorner() (top, left bool) {
	x := func(v float64) float64 { return math.Log(v) }
	y := func(v float64) float64 {
		if pn.logY {
			return math.Log(v)
		}
		return v
	}
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, c := range pn.curves {
		for i := range c.x {
			xmin, xmax = math.Min(xmin, x(c.x[i])), math.Max(xmax, x(c.x[i]))
			ymin, ymax = math.Min(ymin, y(c.y[i].Mean)), math.Max(ymax, y(c.y[i].Mean))
		}
	}
	best := math.MaxInt
	for _, corner := range [4][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		n := 0
		for _, c := range pn.curves {
			for i := range c.x {
				u := (x(c.x[i]) - xmin) / (xmax - xmin)
				for _, v := range []float64{c.y[i].Mean - c.y[i].Std, c.y[i].Mean, c.y[i].Mean + c.y[i].Std} {
					w := (y(v) - ymin) / (ymax - ymin)
					if (corner[1] && u < 0.4 || !corner[1] && u > 0.6) && (corner[0] && w > 0.5 || !corner[0] && w < 0.5) {
						n++
					}
				}
			}
		}
		if n < best {
			best, top, left = n, corner[0], corner[1]
		}
	}
	return top, left
}

// build draws the panel into a new plot.Plot; the x axis is logarithmic.
// gonum/plot panics on some degenerate inputs (e.g. a non-positive value on
// a log axis); the panic is turned into an error.
func (pn panel) build() (p *plot.Plot, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("experiments: plot %q: %v", pn.title, r)
		}
	}()
	p = plot.New()
	p.Title.Text = pn.title
	p.X.Label.Text = pn.xlabel
	p.Y.Label.Text = pn.ylabel
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	if pn.logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Legend.Top, p.Legend.Left = pn.legendCorner()
	p.Add(plotter.NewGrid())
	for i, c := range pn.curves {
		if len(c.x) == 0 {
			continue
		}
		for j := range c.x {
			if !(c.x[j] > 0) || math.IsNaN(c.y[j].Mean) || (pn.logY && !(c.y[j].Mean > 0)) {
				return nil, fmt.Errorf("experiments: plot %q: curve %q has the point (%v, %v)", pn.title, c.name, c.x[j], c.y[j].Mean)
			}
		}
		line, points, err := plotter.NewLinePoints(errorXYs(c))
		if err != nil {
			return nil, fmt.Errorf("experiments: plot %q: %w", pn.title, err)
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i)
		points.Color = plotutil.Color(i)
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		if !pn.logY {
			bars, err := plotter.NewYErrorBars(errorXYs(c))
			if err != nil {
				return nil, fmt.Errorf("experiments: plot %q: %w", pn.title, err)
			}
			bars.Color = plotutil.Color(i)
			p.Add(bars)
		}
		p.Legend.Add(c.name, line, points)
	}
	// Pad the log axis so that the end points are not on the frame and
	// the ticks of both end decades are drawn.
	p.X.Min /= 1.5
	p.X.Max *= 1.5
	// A log axis with one value (a sweep over one lambda) would be padded
	// by gonum/plot to [v-1, v+1], which may reach 0: pad it by factors.
	if pn.logY && p.Y.Min == p.Y.Max {
		p.Y.Min /= 2
		p.Y.Max *= 2
	}
	return p, nil
}

// writePNG draws the panels side by side and writes them as one PNG image.
func writePNG(w io.Writer, panels ...panel) (err error) {
	plots := make([]*plot.Plot, len(panels))
	for i, pn := range panels {
		if plots[i], err = pn.build(); err != nil {
			return err
		}
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("experiments: drawing %q: %v", panels[0].title, r)
		}
	}()
	img := vgimg.New(vg.Length(len(panels))*panelWidth, panelHeight)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Millimeter, PadY: vg.Millimeter,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
	canvases := plot.Align([][]*plot.Plot{plots}, tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[0][i])
	}
	_, err = vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}

// fromCurve turns a curve into a named series.
func fromCurve(name string, c curve) series { return series{name: name, x: c.lambdas, y: c.stats} }

// Figure1 writes fig1.png: the test accuracy against lambda (log scale), one
// curve per eps and one for the non-private models, mean +- std over the
// splits.
func Figure1(w io.Writer, rows []Result) error {
	s := Summarize(rows)
	pn := panel{
		title:  fmt.Sprintf("%s: %s noise, calibrated to the stability sensitivity", dataName(s.Dataset, s.DataFile), s.Mechanism),
		xlabel: "lambda", ylabel: fmt.Sprintf("test accuracy (mean +- std, %d splits)", s.Splits),
	}
	for _, eps := range s.Epsilons {
		pn.curves = append(pn.curves, fromCurve(fmt.Sprintf("eps = %g", eps), epsilonCurve(rows, s.Mechanism, eps)))
	}
	pn.curves = append(pn.curves, fromCurve("non-private", nonPrivateCurve(rows, s.Mechanism)))
	return writePNG(w, pn)
}

// Figure2 writes fig2.png from the fixed-scale rows: on the left the test
// accuracy against lambda at the fixed noise scale (and non-private), on
// the right the eps that the fixed scale buys at each lambda (the paper's
// Corollary 13: a more stable run, larger lambda, is more private at the
// same noise). It returns an error when rows has no fixed-scale row.
func Figure2(w io.Writer, rows []Result) error {
	s := Summarize(rows)
	if len(s.FixedPoints) == 0 {
		return fmt.Errorf("%w: no fixed-scale rows for Figure 2", ErrConfig)
	}
	fixed := func(r Result) bool { return r.Mode == FixedScale }
	mech := rows[slices.IndexFunc(rows, fixed)].Mechanism
	acc := panel{
		title:  fmt.Sprintf("%s: %s noise of fixed scale %.3g", dataName(s.Dataset, s.DataFile), s.Mechanism, s.FixedScale),
		xlabel: "lambda", ylabel: fmt.Sprintf("test accuracy (mean +- std, %d splits)", s.Splits),
		curves: []series{
			fromCurve("private, fixed scale", collect(rows, fixed, func(r Result) float64 { return r.AccPrivate })),
			fromCurve("non-private", nonPrivateCurve(rows, mech)),
		},
	}
	eps := panel{
		title:  "privacy bought by the fixed noise (Corollary 13)",
		xlabel: "lambda", ylabel: "eps", logY: true,
		curves: []series{fromCurve("eps bought at the fixed scale", collect(rows, fixed, func(r Result) float64 { return r.Epsilon }))},
	}
	return writePNG(w, acc, eps)
}

// Frontier writes frontier.png, the privacy-utility frontier: one panel per
// mechanism, the best mean test accuracy against eps (log scale) of every
// knob family (lambda alone, lambda with one knob, all knobs), and on the
// first panel the privately selected releases. The winning settings are in
// the summary.
func Frontier(w io.Writer, rows []Result) error {
	s := Summarize(rows)
	if len(s.Frontier) == 0 {
		return fmt.Errorf("%w: no calibrated rows for the frontier", ErrConfig)
	}
	var panels []panel
	for i, m := range s.Mechanisms {
		pn := panel{
			title:  fmt.Sprintf("%s: %s, best setting per eps (test-selected)", dataName(s.Dataset, s.DataFile), s.mechLabel(m)),
			xlabel: "eps", ylabel: fmt.Sprintf("best mean test accuracy (%d splits)", s.Splits),
		}
		for _, fam := range s.Families {
			c := series{name: "tuned: " + fam}
			for _, p := range s.Frontier {
				if p.Mechanism == m && p.Family == fam {
					c.x, c.y = append(c.x, p.Epsilon), append(c.y, p.Stat)
				}
			}
			pn.curves = append(pn.curves, c)
		}
		if i == 0 && len(s.Selected) > 0 {
			c := series{name: "privately selected (all pure)"}
			for _, p := range s.Selected {
				c.x, c.y = append(c.x, p.Epsilon), append(c.y, p.Stat)
			}
			pn.curves = append(pn.curves, c)
		}
		panels = append(panels, pn)
	}
	return writePNG(w, panels...)
}
