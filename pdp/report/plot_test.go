package report

import (
	"bytes"
	"errors"
	"image/png"
	"math"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/internal/figure"
	"github.com/stabpriv/stabpriv/pdp"
)

func TestFigureTitle(t *testing.T) {
	for _, c := range []struct {
		source, want string
	}{
		{"/data/sets/wdbc.csv", "of wdbc.csv"},
		{"embedded Wisconsin diagnostic breast cancer data", "of embedded Wisconsin diagnostic breast cancer data"},
	} {
		rep := &Report{Loss: "logistic", Lambda: 0.0021544, Mechanism: "gamma", NoiseScaleName: "theta", NoiseScale: 18.61234567,
			Notes: []string{"data: " + c.source, "standardized"}}
		title := figureTitle(rep)
		if !strings.Contains(title, c.want) || strings.Contains(title, "/data/") {
			t.Errorf("title %q does not name the data as %q", title, c.want)
		}
		if d := figure.SignificantDigits(title); d > 4 {
			t.Errorf("title %q has a number with %d significant digits", title, d)
		}
	}
}

func TestWritePNGSize(t *testing.T) {
	eps := []float64{1e-4, 3e-4, 1e-3, 2e-3, 0.01, 0.02, 0.1, 0}
	var buf bytes.Buffer
	if err := WritePNG(&buf, "title", eps, Reference{"DP eps", 1}, Reference{"worst-case pDP eps", 0.5}); err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if r := float64(cfg.Width) / float64(cfg.Height); r < 1.5 || r > 3.5 || cfg.Height < 600 {
		t.Errorf("pdp.png is %d x %d: want a width 1.5 to 3.5 times the height, at least 600 pixels high", cfg.Width, cfg.Height)
	}
}

// TestWriteFigureSeries draws several series (one box only, one with
// zeros) and refuses a negative epsilon.
func TestWriteFigureSeries(t *testing.T) {
	series := []Series{
		{Name: "training rows, remove-one", Short: "remove-one", Values: []float64{1e-3, 2e-3, 0.05, 0}},
		{Name: "held-out targets, add-one", Short: "targets", Values: []float64{5e-4, 0.01}},
		{Name: "replace-one bound", Short: "replace-one", Values: []float64{0.4, 0.45}, BoxOnly: true},
	}
	var buf bytes.Buffer
	if err := WriteFigure(&buf, "title", series, Reference{"DP eps", 1}, Reference{"pDP for all", 0.5}); err != nil {
		t.Fatal(err)
	}
	if _, err := png.DecodeConfig(&buf); err != nil {
		t.Fatal(err)
	}
	series[1].Values = []float64{-1}
	if err := WriteFigure(&buf, "title", series); !errors.Is(err, pdp.ErrInput) {
		t.Errorf("a negative epsilon drawn: %v", err)
	}
}

// TestCountTicks: the histogram's count axis is marked at integers only,
// without decimals, for large and small counts.
func TestCountTicks(t *testing.T) {
	for _, hi := range []float64{52.5, 2.1, 1000} {
		ticks := countTicks{}.Ticks(0, hi)
		labelled := 0
		for _, tk := range ticks {
			if tk.Value != math.Round(tk.Value) || strings.Contains(tk.Label, ".") {
				t.Errorf("[0, %v]: tick %v labelled %q", hi, tk.Value, tk.Label)
			}
			if tk.Label != "" {
				labelled++
			}
		}
		if labelled < 2 {
			t.Errorf("[0, %v]: ticks %v", hi, ticks)
		}
	}
}
