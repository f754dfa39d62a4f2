package pdp

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/stabpriv/stabpriv/internal/figure"
)

// Reference is a horizontal (box plot) or vertical (histogram) line drawn
// with the distribution: the worst-case DP epsilon of the release, for
// example.
type Reference struct {
	Name  string
	Value float64
}

// Size of the figure of WritePNG.
const (
	histWidth  = 6 * vg.Inch
	boxWidth   = 2.5 * vg.Inch
	plotHeight = 4.5 * vg.Inch
)

// WritePNG draws the distribution of the per-instance epsilons eps over the
// rows, in the style of Wang's Figures 1 and 2 (Per-instance DP): on the
// left a histogram of eps on a log axis with the references as vertical
// lines, titled title, on the right a box plot of eps on a log axis with
// the references as horizontal lines, and the legend of the references
// beside it, outside the data. Rows with eps = 0 cannot be drawn on the log
// scale; their count is given in the title. The figure is confidential like
// the values (see Confidential); its title says so.
func WritePNG(w io.Writer, title string, eps []float64, refs ...Reference) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("pdp: drawing %q: %v", title, r)
		}
	}()
	var logs plotter.Values
	zeros := 0
	for _, e := range eps {
		switch {
		case e > 0 && !math.IsInf(e, 0):
			logs = append(logs, math.Log10(e))
		case e == 0:
			zeros++
		default:
			return fmt.Errorf("%w: epsilon %v cannot be drawn", ErrInput, e)
		}
	}
	if len(logs) == 0 {
		return fmt.Errorf("%w: no positive epsilon to draw", ErrInput)
	}
	note := "confidential: do not publish"
	if zeros > 0 {
		note += fmt.Sprintf("; %d rows with eps = 0 not drawn", zeros)
	}
	lo, hi := logs[0], logs[0]
	for _, v := range logs {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	for _, r := range refs {
		if r.Value > 0 && !math.IsInf(r.Value, 0) {
			lo, hi = math.Min(lo, math.Log10(r.Value)), math.Max(hi, math.Log10(r.Value))
		}
	}

	hist := plot.New()
	hist.Title.Text = title + "\n" + note
	hist.Title.Padding = vg.Points(6)
	hist.X.Label.Text = "per-instance epsilon (log scale)"
	hist.X.Tick.Marker = figure.Log10Ticks{}
	hist.Y.Label.Text = "rows"
	hist.Add(plotter.NewGrid())
	bins := max(10, min(60, int(math.Sqrt(float64(len(logs))))))
	h, err := plotter.NewHist(logs, bins)
	if err != nil {
		return fmt.Errorf("pdp: histogram: %w", err)
	}
	hist.Add(h)
	var ymax float64
	for _, b := range h.Bins {
		ymax = math.Max(ymax, b.Weight)
	}

	box := plot.New()
	box.Title.Text = "box plot"
	box.Title.Padding = vg.Points(6)
	box.Y.Label.Text = "per-instance epsilon (log scale)"
	box.Y.Tick.Marker = figure.Log10Ticks{}
	box.X.Label.Text = fmt.Sprintf("%d rows", len(eps))
	box.Add(plotter.NewGrid())
	bp, err := plotter.NewBoxPlot(vg.Points(50), 0, logs)
	if err != nil {
		return fmt.Errorf("pdp: box plot: %w", err)
	}
	box.Add(bp)
	box.NominalX("pDP of the rows")

	legend := plot.NewLegend()
	legend.Padding = vg.Points(3)
	for i, r := range refs {
		if !(r.Value > 0) || math.IsInf(r.Value, 0) {
			continue
		}
		v := math.Log10(r.Value)
		hl, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: v}, {X: 0.5, Y: v}})
		if err != nil {
			return err
		}
		hl.Color = plotutil.Color(i + 1)
		hl.Dashes = plotutil.Dashes(i + 1)
		hl.Width = vg.Points(2)
		box.Add(hl)
		vl, err := plotter.NewLine(plotter.XYs{{X: v, Y: 0}, {X: v, Y: ymax}})
		if err != nil {
			return err
		}
		vl.LineStyle = hl.LineStyle
		hist.Add(vl)
		legend.Add(fmt.Sprintf("%s = %.3g", r.Name, r.Value), hl)
	}
	pad := 0.05*(hi-lo) + 0.1
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
