// Package figure lays out gonum plots side by side, each with its legend in
// a column to the right of its data area, so that no legend hides data, and
// writes them as one PNG image.
package figure

import (
	"fmt"
	"image/png"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// DPI is the resolution of the PNG images: a 6 inch wide plot is 900
// pixels wide.
const DPI = 150

// Spacing of the layout.
const (
	// margin surrounds the figure.
	margin = 2 * vg.Millimeter
	// gap separates a plot from its legend, and a panel from the next.
	gap = 4 * vg.Millimeter
)

// Panel is one plot of a figure and its legend.
type Panel struct {
	// Plot is drawn in a box Width wide. Its own legend, Plot.Legend, is
	// drawn by gonum/plot inside the data area: leave it empty.
	Plot *plot.Plot
	// Legend, when not nil and not empty, is drawn in a column to the
	// right of the plot, its top level with the top of the data area.
	Legend *plot.Legend
	// Width is the width of the plot, its legend excluded. Required.
	Width vg.Length
}

// Box is where a panel was drawn: the data area of its plot and its legend
// (the zero Rectangle when it has none).
type Box struct {
	Data, Legend vg.Rectangle
}

// legendSize returns the size of the legend's entries (zero for a nil or
// empty legend).
func legendSize(l *plot.Legend) vg.Point {
	if l == nil {
		return vg.Point{}
	}
	return l.Rectangle(draw.Canvas{}).Size()
}

// Size returns the size of the figure of the panels drawn at the given
// height: the sum of their widths and legend columns, and the height or the
// height of the tallest legend, whichever is larger, with the margins.
func Size(height vg.Length, panels ...Panel) (width, h vg.Length) {
	h = height
	for i, p := range panels {
		if i > 0 {
			width += gap
		}
		width += p.Width
		if s := legendSize(p.Legend); s.X > 0 {
			width += gap + s.X
			h = max(h, s.Y+2*margin)
		}
	}
	return width + 2*margin, h
}

// Draw draws the panels side by side on c, which has the size that Size
// gives, and returns the box of each panel. A legend's top is level with
// the top of its plot's data area, unless it is too tall to fit below it.
func Draw(c draw.Canvas, panels ...Panel) []Box {
	c = draw.Crop(c, margin, -margin, margin, -margin)
	boxes := make([]Box, len(panels))
	x := c.Min.X
	for i, p := range panels {
		pc := c
		pc.Min.X, pc.Max.X = x, x+p.Width
		p.Plot.Draw(pc)
		data := p.Plot.DataCanvas(pc)
		boxes[i].Data = data.Rectangle
		x += p.Width
		if s := legendSize(p.Legend); s.X > 0 {
			lc := c
			lc.Min.X, lc.Max.X = x+gap, x+gap+s.X
			// Level with the top of the data area, or from the top of
			// the figure for a legend taller than the room below it.
			lc.Max.Y = data.Max.Y
			if lc.Max.Y-s.Y < c.Min.Y {
				lc.Max.Y = min(c.Max.Y, c.Min.Y+s.Y)
			}
			lc.Min.Y = lc.Max.Y - s.Y
			p.Legend.Top, p.Legend.Left = true, true
			p.Legend.XOffs, p.Legend.YOffs = 0, 0
			p.Legend.Draw(lc)
			boxes[i].Legend = p.Legend.Rectangle(lc)
			x += gap + s.X
		}
		x += gap
	}
	return boxes
}

// WritePNG draws the panels side by side, at the given height, as a PNG
// image of DPI dots per inch (Size gives its size), and returns the box of
// each panel. gonum/plot panics on some degenerate inputs; the panic is
// returned as an error naming the first panel's title.
func WritePNG(w io.Writer, height vg.Length, panels ...Panel) (boxes []Box, err error) {
	if len(panels) == 0 {
		return nil, fmt.Errorf("figure: no panel to draw")
	}
	defer func() {
		if r := recover(); r != nil {
			boxes, err = nil, fmt.Errorf("figure: drawing %q: %v", panels[0].Plot.Title.Text, r)
		}
	}()
	width, h := Size(height, panels...)
	img := vgimg.NewWith(vgimg.UseWH(width, h), vgimg.UseDPI(DPI))
	boxes = Draw(draw.New(img), panels...)
	// The fastest deflate level: a figure of flat colours compresses
	// nearly as well, at a fraction of the default level's CPU.
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	return boxes, enc.Encode(w, img.Image())
}

// Short formats a number for titles, labels and ticks: 3 significant
// digits (2.1544e-4 reads 0.000215).
func Short(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }

// Log10Ticks marks an axis that holds log10 of the values, labelled with
// the values (Short): at the decades, with minor ticks at their multiples,
// or at the Data values (when AtData, or when the axis spans fewer than two
// decades and Data is not empty).
//
// Plotting log10 of the values on a linear axis, rather than using
// plot.LogScale, keeps the data area whole: gonum/plot places an axis
// label's glyph box at the arithmetic mean of the axis range, which on a
// log scale lies near its end, and shrinks the data area to make room for
// it.
type Log10Ticks struct {
	AtData bool
	// Data are values (not their log10), in increasing order.
	Data []float64
}

// Ticks implements plot.Ticker.
func (t Log10Ticks) Ticks(min, max float64) []plot.Tick {
	var decades []plot.Tick
	labelled := 0
	for k := math.Floor(min); k <= max; k++ {
		for m := 1.0; m < 10; m++ {
			v := k + math.Log10(m)
			if v < min || v > max {
				continue
			}
			tk := plot.Tick{Value: v}
			if m == 1 {
				tk.Label = Short(math.Pow(10, k))
				labelled++
			}
			decades = append(decades, tk)
		}
	}
	if !t.AtData && labelled >= 2 || len(t.Data) == 0 {
		return decades
	}
	ticks := make([]plot.Tick, len(t.Data))
	for i, v := range t.Data {
		ticks[i] = plot.Tick{Value: math.Log10(v), Label: Short(v)}
	}
	return ticks
}

// number matches a decimal number: its digits, an optional fraction and an
// optional exponent.
var number = regexp.MustCompile(`\d+(\.\d+)?([eE][-+]?\d+)?`)

// SignificantDigits returns the largest number of significant digits of a
// number with a fraction or an exponent written in s (0 when s has none):
// "lambda 0.0021544" has 5, "eps = 1e-05" has 1; integers ("455 rows")
// are not counted. Titles and labels keep it small.
func SignificantDigits(s string) int {
	most := 0
	for _, m := range number.FindAllString(s, -1) {
		if !strings.ContainsAny(m, ".eE") {
			continue
		}
		mant, _, _ := strings.Cut(strings.ToLower(m), "e")
		most = max(most, len(strings.TrimLeft(strings.Replace(mant, ".", "", 1), "0")))
	}
	return most
}
