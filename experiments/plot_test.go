package experiments

import (
	"bytes"
	"image/png"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/stabpriv/stabpriv/experiments/internal/chart"
	"github.com/stabpriv/stabpriv/experiments/protocol"
	"github.com/stabpriv/stabpriv/internal/figure"
)

// spreadRows returns sweep rows built by hand whose accuracies differ
// wildly between the two splits (0.02 and 0.97, 0.9 and 0.05), so that a
// bar of one std around their mean leaves [0, 1] on both sides, with
// unrounded lambdas, eps and noise scale, two mechanisms, a knob family,
// fixed-scale and selected rows, and the majority share recorded.
func spreadRows() []Result {
	var rows []Result
	acc := [2][2]float64{{0.02, 0.97}, {0.9, 0.05}}
	for split := range 2 {
		majority := []float64{0.6, 0.7}[split]
		for li, lambda := range []float64{1e-4, 2.1544e-4, 4.6416e-4} {
			for _, set := range []Setting{{Lambda: lambda}, {Lambda: lambda, Clip: 0.5, Varied: KnobClip}} {
				for mi, mech := range []string{"gamma", "laplace"} {
					for _, eps := range []float64{0.123456, 1, 4.56789} {
						rows = append(rows, Result{
							Dataset: protocol.CSV, DataFile: "wdbc.csv", Mode: Calibrated, Split: split, Lambda: lambda, Setting: set,
							Epsilon: eps, Mechanism: mech, AccPrivate: acc[mi][split], AccNonPrivate: acc[(li+1)%2][split], Majority: majority,
						})
					}
				}
			}
			rows = append(rows, Result{
				Dataset: protocol.CSV, DataFile: "wdbc.csv", Mode: FixedScale, Split: split, Lambda: lambda, Setting: Setting{Lambda: lambda},
				Epsilon: 0.0123456789 / lambda, Mechanism: "gamma", NoiseScaleName: "theta", NoiseScale: 5.1712345678,
				AccPrivate: acc[li%2][split], AccNonPrivate: acc[(li+1)%2][split], Majority: majority,
			})
		}
		for _, eps := range []float64{0.123456, 1, 4.56789} {
			rows = append(rows, Result{
				Dataset: protocol.CSV, DataFile: "wdbc.csv", Mode: Selected, Split: split, Lambda: 1e-4, Setting: Setting{Lambda: 1e-4},
				Epsilon: eps, EpsSelect: 2 * eps / 3, EpsRelease: eps / 3, Mechanism: "gamma", AccPrivate: acc[0][split], Majority: majority,
			})
		}
	}
	return rows
}

// spreadFeatSel returns feature-selection rows whose F1 differ wildly
// between the two splits.
func spreadFeatSel() []FeatSelResult {
	var rows []FeatSelResult
	f1 := []float64{0.01, 0.98}
	for split := range 2 {
		for _, lambda := range []float64{1e-4, 2.1544e-4} {
			for _, eps := range []float64{0.123456, 1} {
				rows = append(rows, FeatSelResult{Dataset: protocol.CSV, DataFile: "wdbc.csv", Split: split, Lambda: lambda, Epsilon: eps,
					Mechanism: "gamma", Rule: RuleDynamic, Rate: 0.05, Threshold: 123.456789, F1: f1[split]})
				for _, t := range []float64{0.05, 0.123456} {
					rows = append(rows, FeatSelResult{Dataset: protocol.CSV, DataFile: "wdbc.csv", Split: split, Lambda: lambda, Epsilon: eps,
						Mechanism: "gamma", Rule: RuleStatic, Threshold: t, F1: f1[1-split]})
				}
			}
		}
	}
	return rows
}

// allPanels returns the panels of every figure of the rows, by figure.
func allPanels(t *testing.T, rows []Result, fs []FeatSelResult) map[string][]chart.Panel {
	t.Helper()
	fig2, err := figure2Panels(rows)
	if err != nil {
		t.Fatal(err)
	}
	frontier, err := frontierPanel(rows)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]chart.Panel{
		"fig1": figure1Panels(rows), "fig2": fig2, "frontier": {frontier},
		"fig3": figure3Panels(fs), "fig5": figure5Panels(fs),
	}
}

// TestErrorBarsInRange checks that no error bar of an accuracy or F1 panel
// leaves [0, 1], that the bars are clipped rather than shrunk (a bar at a
// boundary keeps a full std on its other side), and that the y label says
// so.
func TestErrorBarsInRange(t *testing.T) {
	rows, fs := spreadRows(), spreadFeatSel()
	oneSided := 0
	for name, panels := range allPanels(t, rows, fs) {
		for _, pn := range panels {
			metric := strings.Contains(pn.YLabel, "accuracy") || strings.Contains(pn.YLabel, "F1")
			if metric != pn.Unit {
				t.Errorf("%s %q: unit = %v for the y label %q", name, pn.Title, pn.Unit, pn.YLabel)
			}
			if !metric {
				continue
			}
			if !strings.Contains(pn.YLabel, "mean ± std over 2 splits, bars clipped to [0, 1]") {
				t.Errorf("%s %q: the y label %q does not say what the bars are", name, pn.Title, pn.YLabel)
			}
			layers, err := pn.Layers()
			if err != nil {
				t.Fatal(err)
			}
			bars := 0
			for _, ly := range layers {
				b, ok := ly.Plotter.(*plotter.YErrorBars)
				if !ok {
					continue
				}
				bars++
				for i, xy := range b.XYs {
					lo, hi := xy.Y-b.YErrors[i].Low, xy.Y+b.YErrors[i].High
					if lo < 0 || hi > 1 {
						t.Errorf("%s %q: error bar [%v, %v] around %v leaves [0, 1]", name, pn.Title, lo, hi, xy.Y)
					}
					if lo == 0 && b.YErrors[i].High > b.YErrors[i].Low || hi == 1 && b.YErrors[i].Low > b.YErrors[i].High {
						oneSided++
					}
				}
			}
			if bars == 0 {
				t.Errorf("%s %q: no error bars", name, pn.Title)
			}
		}
	}
	if oneSided == 0 {
		t.Error("no one-sided bar at a boundary: the bars were shrunk, or the rows do not reach the boundaries")
	}
}

// TestMajorityLine checks that every accuracy panel has a labelled line at
// the mean majority-class accuracy of the splits.
func TestMajorityLine(t *testing.T) {
	rows := spreadRows()
	want := Summarize(rows).Majority.Mean
	if math.Abs(want-0.65) > 1e-12 {
		t.Fatalf("mean majority share %v, want 0.65", want)
	}
	accuracy := 0
	for name, panels := range allPanels(t, rows, spreadFeatSel()) {
		for _, pn := range panels {
			if !strings.Contains(pn.YLabel, "accuracy") {
				continue
			}
			accuracy++
			layers, err := pn.Layers()
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, ly := range layers {
				if fn, ok := ly.Plotter.(*plotter.Function); ok && strings.Contains(ly.Name, "majority class") && fn.F(1) == want {
					found = true
				}
			}
			if !found {
				t.Errorf("%s %q: no majority-class line at %v", name, pn.Title, want)
			}
		}
	}
	if accuracy != 3 {
		t.Errorf("%d accuracy panels, want 3 (fig1, fig2's left, frontier)", accuracy)
	}
}

// TestFigureText checks that the titles name the data file and that no
// title or legend entry writes a number with more than 4 significant
// digits.
func TestFigureText(t *testing.T) {
	for name, panels := range allPanels(t, spreadRows(), spreadFeatSel()) {
		if !strings.HasPrefix(panels[0].Title, "wdbc.csv: ") {
			t.Errorf("%s: title %q does not name the data file", name, panels[0].Title)
		}
		for _, pn := range panels {
			texts := []string{pn.Title, pn.XLabel, pn.YLabel}
			layers, err := pn.Layers()
			if err != nil {
				t.Fatal(err)
			}
			for _, ly := range layers {
				texts = append(texts, ly.Name)
			}
			for _, s := range texts {
				if d := figure.SignificantDigits(s); d > 4 {
					t.Errorf("%s: %q has a number with %d significant digits", name, s, d)
				}
			}
		}
	}
}

// TestFrontierSize checks that the frontier is one readable figure: not a
// strip of panels, whatever the number of mechanisms.
func TestFrontierSize(t *testing.T) {
	rows := spreadRows()
	for _, mech := range []string{"gaussian-analytic", "objective"} {
		for _, r := range rows {
			if r.Mode == Calibrated && r.Mechanism == "gamma" {
				r.Mechanism = mech
				rows = append(rows, r)
			}
		}
	}
	var buf bytes.Buffer
	if err := Frontier(&buf, rows); err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if r := float64(cfg.Width) / float64(cfg.Height); r < 1 || r > 2.5 || cfg.Height < 600 {
		t.Errorf("frontier.png is %d x %d: want a width 1 to 2.5 times the height, at least 600 pixels high", cfg.Width, cfg.Height)
	}
}
