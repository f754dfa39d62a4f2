package chart

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// TestUnitTicks checks the labelled steps of a unit axis: 0.2 over [0, 1]
// and 0.05 over [0.6, 0.9], a minor tick between labels.
func TestUnitTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		labels []string
	}{
		{0, 1, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{0.6, 0.9, []string{"0.60", "0.65", "0.70", "0.75", "0.80", "0.85", "0.90"}},
	} {
		var got []string
		for _, tk := range (UnitTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if strings.Join(got, " ") != strings.Join(tc.labels, " ") {
			t.Errorf("[%v, %v]: labels %v, want %v", tc.lo, tc.hi, got, tc.labels)
		}
	}
}

// TestLayers checks that a unit panel's error bars stay inside [0, 1],
// that two curves at the same x are nudged apart, and that a point a log
// axis cannot hold is an error naming the panel.
func TestLayers(t *testing.T) {
	pn := Panel{Title: "t", Unit: true, Curves: []Series{
		{Name: "a", X: []float64{1, 10}, Y: []Point{{Mean: 0.05, Std: 0.3}, {Mean: 0.9, Std: 0.3}}},
		{Name: "b", X: []float64{1, 10}, Y: []Point{{Mean: 0.5, Std: 0.1}, {Mean: 0.5, Std: 0.1}}, Look: 1},
	}}
	layers, err := pn.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var xs []float64
	for _, ly := range layers {
		b, ok := ly.Plotter.(*plotter.YErrorBars)
		if !ok {
			continue
		}
		for i, xy := range b.XYs {
			if lo, hi := xy.Y-b.YErrors[i].Low, xy.Y+b.YErrors[i].High; lo < 0 || hi > 1 {
				t.Errorf("bar [%v, %v] leaves [0, 1]", lo, hi)
			}
		}
		xs = append(xs, b.XYs[0].X)
	}
	if len(xs) != 2 || !(xs[0] < xs[1]) {
		t.Errorf("the first bars of the two curves are at x = %v, want nudged apart", xs)
	}
	pn.Curves[0].X[0] = 0
	if _, err := pn.Layers(); err == nil || !strings.Contains(err.Error(), `plot "t"`) {
		t.Errorf("x = 0 on a log axis: err %v", err)
	}
}

// TestWritePNG checks that two panels make one PNG image, wider than high.
func TestWritePNG(t *testing.T) {
	pn := Panel{Title: "p", XLabel: "x", YLabel: "y", Unit: true,
		Curves: []Series{{Name: "c", X: []float64{0.1, 1}, Y: []Point{{Mean: 0.7}, {Mean: 0.8}}}},
		Refs:   []Ref{{Name: "r", Y: 0.5}}}
	var buf bytes.Buffer
	if err := WritePNG(&buf, PanelHeight, pn, pn); err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width <= cfg.Height {
		t.Errorf("%d x %d image for two panels side by side", cfg.Width, cfg.Height)
	}
}
