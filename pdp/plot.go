package pdp

import (
	"fmt"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Reference is a horizontal (box plot) or vertical (histogram) line drawn
// with the distribution: the worst-case DP epsilon of the release, for
// example.
type Reference struct {
	Name  string
	Value float64
}

// WritePNG draws the distribution of the per-instance epsilons eps over the
// rows, in the style of Wang's Figures 1 and 2 (Per-instance DP): on the
// left a box plot of log10(eps) with the references as horizontal lines, on
// the right a histogram of log10(eps) with the references as vertical
// lines. Rows with eps = 0 cannot be drawn on the log scale; their count is
// given in the title. The figure is confidential like the values (see
// Confidential); its title says so.
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

	box := plot.New()
	box.Title.Text = title + "\n" + note
	box.Y.Label.Text = "log10 per-instance epsilon"
	box.X.Label.Text = fmt.Sprintf("%d rows", len(eps))
	box.Add(plotter.NewGrid())
	bp, err := plotter.NewBoxPlot(vg.Points(60), 0, logs)
	if err != nil {
		return fmt.Errorf("pdp: box plot: %w", err)
	}
	box.Add(bp)
	box.NominalX("pDP of the rows")

	hist := plot.New()
	hist.Title.Text = "histogram of log10 epsilon"
	hist.X.Label.Text = "log10 per-instance epsilon"
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
		box.Legend.Add(fmt.Sprintf("%s = %.3g", r.Name, r.Value), hl)
		vl, err := plotter.NewLine(plotter.XYs{{X: v, Y: 0}, {X: v, Y: ymax}})
		if err != nil {
			return err
		}
		vl.Color, vl.Dashes, vl.Width = hl.Color, hl.Dashes, hl.Width
		hist.Add(vl)
		hist.Legend.Add(fmt.Sprintf("%s = %.3g", r.Name, r.Value), vl)
	}
	// Room above the data for the legend of the box plot.
	pad := 0.05*(hi-lo) + 0.1
	box.Y.Min, box.Y.Max = lo-pad, hi+4*pad
	hist.X.Min, hist.X.Max = lo-pad, hi+pad
	hist.Y.Max = 1.3 * ymax
	box.Legend.Top, hist.Legend.Top, hist.Legend.Left = true, true, true

	const width, height = 6 * vg.Inch, 4.5 * vg.Inch
	img := vgimg.New(2*width, height)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter, PadY: vg.Millimeter,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
	plots := []*plot.Plot{box, hist}
	canvases := plot.Align([][]*plot.Plot{plots}, tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[0][i])
	}
	_, err = vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}
