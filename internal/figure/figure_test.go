package figure

import (
	"bytes"
	"image/png"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

func TestSignificantDigits(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{
		{"no number", 0},
		{"455 rows, fig1", 0},
		{"lambda 0.0021544", 5},
		{"lambda 0.00215", 3},
		{"eps = 1e-05, scale 5.17", 3},
		{"scale 5.1712345e+02", 8},
		{"T = 0.50", 2},
	} {
		if got := SignificantDigits(c.s); got != c.want {
			t.Errorf("SignificantDigits(%q) = %d, want %d", c.s, got, c.want)
		}
	}
}

// TestLegendOutside checks that every legend lies to the right of its
// plot's data area, beside the next panel, and inside the image.
func TestLegendOutside(t *testing.T) {
	panel := func(names ...string) Panel {
		p := plot.New()
		p.Title.Text = "title"
		line, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
		if err != nil {
			t.Fatal(err)
		}
		p.Add(line)
		l := plot.NewLegend()
		for _, n := range names {
			l.Add(n, line)
		}
		return Panel{Plot: p, Legend: &l, Width: 4 * vg.Inch}
	}
	// The second panel's legend is taller than the height asked for.
	many := make([]string, 30)
	for i := range many {
		many[i] = "a long legend entry"
	}
	panels := []Panel{panel("a curve", "another curve"), panel(many...), panel()}
	const height = 3 * vg.Inch
	var buf bytes.Buffer
	boxes, err := WritePNG(&buf, height, panels...)
	if err != nil {
		t.Fatal(err)
	}
	width, h := Size(height, panels...)
	if !(h > height) {
		t.Errorf("height %v: want more than %v for a legend of 30 entries", h, height)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != int(width.Dots(DPI)+0.5) || b.Dy() != int(h.Dots(DPI)+0.5) {
		t.Errorf("image %v, want %v x %v at %d dpi", b, width, h, DPI)
	}
	for i, b := range boxes {
		if i == 2 {
			if b.Legend != (vg.Rectangle{}) {
				t.Errorf("panel 2 has no legend entries, drawn at %v", b.Legend)
			}
			continue
		}
		if !(b.Legend.Min.X > b.Data.Max.X) || !(b.Legend.Min.Y >= 0 && b.Legend.Max.Y <= h && b.Legend.Max.X <= width) {
			t.Errorf("panel %d: legend %v, data %v: want the legend right of the data, inside %v x %v", i, b.Legend, b.Data, width, h)
		}
		if b.Legend.Max.X >= boxes[i+1].Data.Min.X {
			t.Errorf("panel %d: legend %v reaches the next panel's data %v", i, b.Legend, boxes[i+1].Data)
		}
	}
}

func TestLog10Ticks(t *testing.T) {
	labels := func(ticks []plot.Tick) []string {
		var out []string
		for _, tk := range ticks {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	lg := math.Log10
	for _, c := range []struct {
		name     string
		t        Log10Ticks
		min, max float64
		want     []string
	}{
		{"decades", Log10Ticks{Data: []float64{1e-4, 1e-2}}, lg(6.7e-5), lg(0.015), []string{"0.0001", "0.001", "0.01"}},
		{"at data", Log10Ticks{AtData: true, Data: []float64{0.1, 0.5, 2}}, lg(0.07), lg(3), []string{"0.1", "0.5", "2"}},
		{"within a decade", Log10Ticks{Data: []float64{0.0021544, 0.0046416}}, lg(0.0015), lg(0.007), []string{"0.00215", "0.00464"}},
	} {
		if got := labels(c.t.Ticks(c.min, c.max)); !slices.Equal(got, c.want) {
			t.Errorf("%s: labels %q, want %q", c.name, got, c.want)
		}
	}
}
