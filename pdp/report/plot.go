package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/stabpriv/stabpriv/internal/figure"
	"github.com/stabpriv/stabpriv/pdp"
)

// Reference is a horizontal (box plot) or vertical (histogram) line drawn
// with the distribution: the worst-case DP epsilon of the release, for
// example.
type Reference struct {
	Name  string
	Value float64
}

// Series is one distribution of per-instance epsilons in a figure: the
// training rows against remove-one or replace-one neighbours, or the
// held-out targets.
type Series struct {
	// Name labels the series in the legend, Short under its box.
	Name, Short string
	Values      []float64
	// BoxOnly leaves the series out of the histogram (a series of bounds
	// piled near one value would flatten the others).
	BoxOnly bool
}

// Size of the figure of WritePNG.
const (
	histWidth  = 6 * vg.Inch
	boxWidth   = 3.5 * vg.Inch
	plotHeight = 4.5 * vg.Inch
)

// WritePNG draws the distribution of the per-instance epsilons eps over the
// rows (WriteFigure with one series).
func WritePNG(w io.Writer, title string, eps []float64, refs ...Reference) error {
	return WriteFigure(w, title, []Series{{Name: "pDP of the rows", Short: "rows", Values: eps}}, refs...)
}

// WriteFigure draws distributions of per-instance epsilons in the style of
// Wang's Figures 1 and 2 (Per-instance DP): on the left their histograms on
// a log axis, overlaid in the series' colours, with the references as
// vertical lines, titled title; on the right a box plot of each series on a
// log axis with the references as horizontal lines (the DP epsilon, the
// data-independent worst case for every target, the data-dependent pDP for
// all targets), and the legend beside it, outside the data. Values of 0
// cannot be drawn on the log scale; their count is given in the title. The
// figure is confidential like the values (see Confidential); its title
// says so.
func WriteFigure(w io.Writer, title string, series []Series, refs ...Reference) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("pdp: drawing %q: %v", title, r)
		}
	}()
	logs := make([]plotter.Values, len(series))
	var zeros []string
	lo, hi := math.Inf(1), math.Inf(-1)
	for k, s := range series {
		z := 0
		for _, e := range s.Values {
			switch {
			case e > 0 && !math.IsInf(e, 0):
				v := math.Log10(e)
				logs[k] = append(logs[k], v)
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			case e == 0:
				z++
			default:
				return fmt.Errorf("%w: epsilon %v cannot be drawn", pdp.ErrInput, e)
			}
		}
		if z > 0 {
			zeros = append(zeros, fmt.Sprintf("%d %s", z, s.Short))
		}
	}
	if math.IsInf(lo, 1) {
		return fmt.Errorf("%w: no positive epsilon to draw", pdp.ErrInput)
	}
	note := "confidential: do not publish"
	if len(zeros) > 0 {
		note += "; not drawn (eps = 0): " + strings.Join(zeros, ", ")
	}
	for _, r := range refs {
		if r.Value > 0 && !math.IsInf(r.Value, 0) {
			lo, hi = math.Min(lo, math.Log10(r.Value)), math.Max(hi, math.Log10(r.Value))
		}
	}
	pad := 0.05*(hi-lo) + 0.1

	hist := plot.New()
	hist.Title.Text = title + "\n" + note
	hist.Title.Padding = vg.Points(6)
	hist.X.Label.Text = "per-instance epsilon (log scale)"
	hist.X.Tick.Marker = figure.Log10Ticks{}
	hist.Y.Label.Text = "rows"
	hist.Y.Tick.Marker = countTicks{}
	hist.Add(plotter.NewGrid())
	var ymax float64
	legend := plot.NewLegend()
	legend.Padding = vg.Points(3)
	// The same bins for every series, over the range of all the values.
	dlo, dhi := math.Inf(1), math.Inf(-1)
	nbins := 10
	for _, l := range logs {
		for _, v := range l {
			dlo, dhi = math.Min(dlo, v), math.Max(dhi, v)
		}
		nbins = max(nbins, min(60, int(math.Sqrt(float64(len(l))))))
	}
	width := (dhi - dlo) / float64(nbins)
	if !(width > 0) {
		dlo, width = dlo-0.05, 0.1/float64(nbins)
	}
	for k, l := range logs {
		if len(l) == 0 {
			continue
		}
		c := seriesColor(k)
		if series[k].BoxOnly {
			// An empty histogram gives the legend its swatch.
			legend.Add(fmt.Sprintf("%s (%d, box only)", series[k].Name, len(series[k].Values)),
				&plotter.Histogram{FillColor: color.NRGBA{R: c.R, G: c.G, B: c.B, A: 90}, LineStyle: draw.LineStyle{Color: c, Width: vg.Points(0.7)}})
			continue
		}
		h := &plotter.Histogram{Width: width, LineStyle: plotter.DefaultLineStyle, Bins: make([]plotter.HistogramBin, nbins)}
		for b := range h.Bins {
			h.Bins[b].Min, h.Bins[b].Max = dlo+float64(b)*width, dlo+float64(b+1)*width
		}
		for _, v := range l {
			b := min(nbins-1, max(0, int((v-dlo)/width)))
			h.Bins[b].Weight++
		}
		h.FillColor = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 90}
		h.LineStyle.Color = c
		h.LineStyle.Width = vg.Points(0.7)
		hist.Add(h)
		for _, b := range h.Bins {
			ymax = math.Max(ymax, b.Weight)
		}
		legend.Add(fmt.Sprintf("%s (%d)", series[k].Name, len(series[k].Values)), h)
	}

	box := plot.New()
	box.Title.Text = "box plots"
	box.Title.Padding = vg.Points(6)
	box.Y.Label.Text = "per-instance epsilon (log scale)"
	box.Y.Tick.Marker = figure.Log10Ticks{}
	box.Add(plotter.NewGrid())
	var names []string
	for k, l := range logs {
		if len(l) == 0 {
			continue
		}
		bp, err := plotter.NewBoxPlot(vg.Points(40), float64(len(names)), l)
		if err != nil {
			return fmt.Errorf("pdp: box plot: %w", err)
		}
		bp.FillColor = color.NRGBA{R: seriesColor(k).R, G: seriesColor(k).G, B: seriesColor(k).B, A: 90}
		box.Add(bp)
		names = append(names, series[k].Short)
	}
	box.NominalX(names...)

	for i, r := range refs {
		if !(r.Value > 0) || math.IsInf(r.Value, 0) {
			continue
		}
		v := math.Log10(r.Value)
		hl, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: v}, {X: float64(len(names)) - 0.5, Y: v}})
		if err != nil {
			return err
		}
		hl.LineStyle = refStyle(i)
		box.Add(hl)
		vl, err := plotter.NewLine(plotter.XYs{{X: v, Y: 0}, {X: v, Y: ymax}})
		if err != nil {
			return err
		}
		vl.LineStyle = hl.LineStyle
		hist.Add(vl)
		legend.Add(fmt.Sprintf("%s = %.3g", r.Name, r.Value), hl)
	}
	box.Y.Min, box.Y.Max = lo-pad, hi+pad
	hist.X.Min, hist.X.Max = lo-pad, hi+pad
	hist.Y.Min, hist.Y.Max = 0, 1.05*ymax

	_, err = figure.WritePNG(w, plotHeight,
		figure.Panel{Plot: hist, Width: histWidth},
		figure.Panel{Plot: box, Legend: &legend, Width: boxWidth})
	if err != nil {
		return fmt.Errorf("pdp: %w", err)
	}
	return nil
}

// seriesColor is the colour of series k: blue, purple, green, brown.
func seriesColor(k int) color.NRGBA {
	cs := []color.NRGBA{{31, 119, 180, 255}, {148, 103, 189, 255}, {44, 160, 44, 255}, {140, 86, 75, 255}}
	return cs[k%len(cs)]
}

// refStyle is the line style of reference k: red dashes, black dots,
// orange dash-dots, then plotutil's.
func refStyle(k int) draw.LineStyle {
	cs := []color.NRGBA{{214, 39, 40, 255}, {0, 0, 0, 255}, {255, 127, 14, 255}}
	st := draw.LineStyle{Width: vg.Points(2), Color: plotutil.Color(k + 3), Dashes: plotutil.Dashes(k + 1)}
	if k < len(cs) {
		st.Color = cs[k]
	}
	return st
}

// figureTitle is the title of the report's figure: what it shows, on which
// data (the base name of a data file named in the report's notes) and for
// which release, its numbers rounded.
func figureTitle(rep *Report) string {
	data := ""
	for _, n := range rep.Notes {
		if s, ok := strings.CutPrefix(n, "data: "); ok {
			data = s
			if strings.ContainsAny(s, `/\`) || strings.HasSuffix(strings.ToLower(s), ".csv") {
				data = filepath.Base(s)
			}
			break
		}
	}
	what := "per-instance DP of the training rows"
	if data != "" {
		what += " of " + data
	}
	return fmt.Sprintf("%s\n%s loss, lambda = %.3g, %s noise, %s = %.3g", what, rep.Loss, rep.Lambda, rep.Mechanism, rep.NoiseScaleName, rep.NoiseScale)
}

// countTicks marks an axis of counts at integers only, labelled without
// decimals.
type countTicks struct{}

// Ticks returns the integer ticks of plot.DefaultTicks in [min, max] (all
// integers when the default step is below one).
func (countTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(min, max) {
		if t.Label == "" || t.Value != math.Round(t.Value) {
			continue
		}
		out = append(out, plot.Tick{Value: t.Value, Label: strconv.FormatFloat(t.Value, 'f', 0, 64)})
	}
	if len(out) < 2 {
		out = out[:0]
		for v := math.Ceil(min); v <= max; v++ {
			out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
		}
	}
	return out
}
