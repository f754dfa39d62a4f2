// Package chart draws the panels of the experiments' figures: curves of a
// mean with an error bar of one standard deviation against a log x axis,
// horizontal reference lines, and a legend beside each panel (package
// internal/figure lays the panels out). It knows nothing of sweeps or
// releases: package experiments turns its results into Panels.
package chart

import (
	"fmt"
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
)

// Size of a Panel's plot, its legend excluded (figure.Panel: the legend is
// drawn in a column to the right of the plot), and the height of a figure
// of panels side by side.
const (
	PanelWidth  = 6 * vg.Inch
	PanelHeight = 4.5 * vg.Inch
)

// xPad is the factor by which the log axes extend beyond the data.
const xPad = 1.5

// Point is the mean and the sample standard deviation of a value over the
// splits of an experiment.
type Point struct {
	Mean, Std float64
}

// Series is one curve of a figure: a mean per x with an error bar of one
// std over the splits.
type Series struct {
	// Name is the legend entry; empty means none.
	Name string
	// X holds the x values (> 0, on a log axis) and Y the point at each.
	X []float64
	Y []Point
	// Look indexes plotutil's colors, dashes and shapes.
	Look int
	// Plain draws the line alone, thin and dotted, without points or
	// error bars: a secondary curve.
	Plain bool
}

// Ref is a horizontal line across a Panel, a level to read the curves
// against (the majority-class accuracy, for example).
type Ref struct {
	Name  string
	Y     float64
	Style draw.LineStyle
}

// Panel is one plot: a title, axis labels, the curves and the reference
// lines. The x axis is logarithmic.
type Panel struct {
	Title, XLabel, YLabel string
	// LogY draws the y axis on a log scale (without error bars).
	LogY bool
	// Unit panels show a metric in [0, 1] (an accuracy, an F1): their
	// error bars are clipped to it and so is their y axis.
	Unit bool
	// XAtData marks the x axis at the x values of the curves instead of
	// at the decades.
	XAtData bool
	Curves  []Series
	Refs    []Ref
}

// errorXYs adapts a Series to the plotter interfaces (XYer, YErrorer) of a
// Panel whose axes hold log10 of the data (the y axis when logY): its x
// values are log10(x) + shift, its error bars of one std are clipped to
// [lo, hi], so that a bar at the boundary of the range is one-sided.
//
// The panels draw log10 of the values on linear axes, with ticks labelled
// by the values (figure.Log10Ticks explains why).
type errorXYs struct {
	Series
	shift, lo, hi float64
	logY          bool
}

func (s errorXYs) Len() int { return len(s.X) }
func (s errorXYs) XY(i int) (float64, float64) {
	y := s.Y[i].Mean
	if s.logY {
		y = math.Log10(y)
	}
	return math.Log10(s.X[i]) + s.shift, y
}
func (s errorXYs) YError(i int) (float64, float64) {
	m, sd := s.Y[i].Mean, s.Y[i].Std
	return max(0, min(sd, m-s.lo)), max(0, min(sd, s.hi-m))
}

// Layer is one plotter of a Panel and its legend entry (none when Name is
// empty).
type Layer struct {
	plot.Plotter
	Name   string
	Thumbs []plot.Thumbnailer
}

// shifts returns what is added to log10 of the x values of each curve so
// that the error bars of curves at the same x stand apart: the k curves
// with points spread over a quarter of the smallest gap between
// neighbouring x values on the log axis (the padding of the axis when
// there is one x), symmetrically around the true x. Plain curves, and the
// curves of a Panel without error bars, are not moved.
func (pn Panel) shifts() []float64 {
	out := make([]float64, len(pn.Curves))
	k, spread := 0, false
	for _, c := range pn.Curves {
		if !c.Plain && len(c.X) > 0 {
			k++
			spread = spread || slices.ContainsFunc(c.Y, func(st Point) bool { return st.Std > 0 })
		}
	}
	if k < 2 || !spread || pn.LogY {
		return out
	}
	xs := pn.xs()
	gap := 2 * math.Log10(xPad)
	for i := 1; i < len(xs); i++ {
		gap = min(gap, math.Log10(xs[i])-math.Log10(xs[i-1]))
	}
	step := gap / 4 / float64(k-1)
	j := 0
	for i, c := range pn.Curves {
		if c.Plain || len(c.X) == 0 {
			continue
		}
		out[i] = (float64(j) - float64(k-1)/2) * step
		j++
	}
	return out
}

// layers returns the plotters of the Panel in legend order: per curve its
// line, points and error bars, then the reference lines. It returns an
// error for a point that cannot be drawn (x <= 0, or y <= 0 on a log y
// axis, or NaN).
func (pn Panel) Layers() ([]Layer, error) {
	lo, hi := math.Inf(-1), math.Inf(1)
	if pn.Unit {
		lo, hi = 0, 1
	}
	shifts := pn.shifts()
	var out []Layer
	for i, c := range pn.Curves {
		if len(c.X) == 0 {
			continue
		}
		for j := range c.X {
			if !(c.X[j] > 0) || math.IsNaN(c.Y[j].Mean) || (pn.LogY && !(c.Y[j].Mean > 0)) {
				return nil, fmt.Errorf("chart: plot %q: curve %q has the point (%v, %v)", pn.Title, c.Name, c.X[j], c.Y[j].Mean)
			}
		}
		xy := errorXYs{c, shifts[i], lo, hi, pn.LogY}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, fmt.Errorf("chart: plot %q: %w", pn.Title, err)
		}
		line.Color = plotutil.Color(c.Look)
		if c.Plain {
			line.Width = vg.Points(1)
			line.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
			out = append(out, Layer{line, c.Name, []plot.Thumbnailer{line}})
			continue
		}
		line.Width = vg.Points(1.5)
		line.Dashes = plotutil.Dashes(c.Look)
		points.Color = plotutil.Color(c.Look)
		points.Shape = plotutil.Shape(c.Look)
		points.Radius = vg.Points(3)
		if !pn.LogY {
			bars, err := plotter.NewYErrorBars(xy)
			if err != nil {
				return nil, fmt.Errorf("chart: plot %q: %w", pn.Title, err)
			}
			bars.Color = plotutil.Color(c.Look)
			out = append(out, Layer{Plotter: bars})
		}
		out = append(out, Layer{Plotter: line}, Layer{points, c.Name, []plot.Thumbnailer{line, points}})
	}
	for _, r := range pn.Refs {
		y := r.Y
		if pn.LogY {
			y = math.Log10(y)
		}
		fn := plotter.NewFunction(func(float64) float64 { return y })
		fn.LineStyle, fn.Samples = r.Style, 2
		out = append(out, Layer{fn, r.Name, []plot.Thumbnailer{fn}})
	}
	return out, nil
}

// build draws the Panel into a new plot.Plot and its legend: the curves
// over the reference lines, the y axis of a unit Panel inside [0, 1].
// gonum/plot panics on some degenerate inputs; the panic is turned into an
// error.
func (pn Panel) Build() (p *plot.Plot, legend *plot.Legend, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, legend, err = nil, nil, fmt.Errorf("chart: plot %q: %v", pn.Title, r)
		}
	}()
	layers, err := pn.Layers()
	if err != nil {
		return nil, nil, err
	}
	p = plot.New()
	p.Title.Text = pn.Title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = pn.XLabel
	p.Y.Label.Text = pn.YLabel
	p.X.Tick.Marker = figure.Log10Ticks{AtData: pn.XAtData, Data: pn.xs()}
	switch {
	case pn.LogY:
		var ys []float64
		for _, c := range pn.Curves {
			for _, st := range c.Y {
				ys = append(ys, st.Mean)
			}
		}
		slices.Sort(ys)
		p.Y.Tick.Marker = figure.Log10Ticks{Data: slices.Compact(ys)}
	case pn.Unit:
		p.Y.Tick.Marker = UnitTicks{}
	}
	p.Add(plotter.NewGrid())
	l := plot.NewLegend()
	l.Padding = vg.Points(3)
	legend = &l
	// The reference lines under the curves, the legend in Layer order.
	for _, under := range []bool{true, false} {
		for _, ly := range layers {
			if _, ok := ly.Plotter.(*plotter.Function); ok == under {
				p.Add(ly.Plotter)
			}
		}
	}
	for _, ly := range layers {
		if ly.Name != "" {
			legend.Add(ly.Name, ly.Thumbs...)
		}
	}
	// Pad the log axes by factors so that the end points are not on the
	// frame.
	p.X.Min -= math.Log10(xPad)
	p.X.Max += math.Log10(xPad)
	if pn.LogY {
		p.Y.Min -= math.Log10(xPad)
		p.Y.Max += math.Log10(xPad)
	}
	for _, ly := range layers {
		if fn, ok := ly.Plotter.(*plotter.Function); ok {
			p.Y.Min, p.Y.Max = min(p.Y.Min, fn.F(0)), max(p.Y.Max, fn.F(0))
		}
	}
	if pn.Unit {
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
func (pn Panel) xs() []float64 {
	var xs []float64
	for _, c := range pn.Curves {
		xs = append(xs, c.X...)
	}
	slices.Sort(xs)
	return slices.Compact(xs)
}

// UnitTicks marks an axis in [0, 1] at a round step giving at most 8
// labelled ticks (0.2 over [0, 1], 0.05 over [0.6, 0.9]), with a minor tick
// between them.
type UnitTicks struct{}

// Ticks implements plot.Ticker.
func (UnitTicks) Ticks(min, max float64) []plot.Tick {
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

// WritePNG draws the panels side by side, each with its legend to its
// right, and writes them as one PNG image.
func WritePNG(w io.Writer, height vg.Length, panels ...Panel) error {
	fp := make([]figure.Panel, len(panels))
	for i, pn := range panels {
		p, legend, err := pn.Build()
		if err != nil {
			return err
		}
		fp[i] = figure.Panel{Plot: p, Legend: legend, Width: PanelWidth}
	}
	if _, err := figure.WritePNG(w, height, fp...); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	return nil
}
