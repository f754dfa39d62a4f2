package pdp

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/internal/figure"
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
