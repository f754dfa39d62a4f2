package experiments

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/paper"
	"github.com/stabpriv/stabpriv/datasets/synthetic"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/experiments/protocol"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/objpert"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/selection"
)

// pngHeader is the signature every PNG file starts with.
var pngHeader = []byte("\x89PNG\r\n\x1a\n")

var synthOnce = sync.OnceValues(func() (*datasets.Dataset, error) {
	ds, _, err := synthetic.Logistic(3000, 8, 11, synthetic.LogisticOptions{ThetaNorm: 12})
	return ds, err
})

// syntheticProtocol returns a planted logistic data set (3000 x 8) for fast sweeps.
func syntheticProtocol(t *testing.T) protocol.Config {
	t.Helper()
	ds, err := synthOnce()
	if err != nil {
		t.Fatal(err)
	}
	return protocol.Config{Dataset: "synthetic", Data: ds}
}

// smallSweep is the sweep of the synthetic tests.
func smallSweep(t *testing.T) SweepConfig {
	return SweepConfig{
		Protocol: syntheticProtocol(t),
		Splits:   3,
		Lambdas:  []float64{1e-3, 1e-2},
		Epsilons: []float64{0.1, 1, 10},
		Passes:   3,
		Seed:     5,
	}
}

func TestSweepSynthetic(t *testing.T) {
	cfg := smallSweep(t)
	rows, err := Sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	nCal := cfg.Splits * len(cfg.Lambdas) * len(cfg.Epsilons)
	nFix := cfg.Splits * len(cfg.Lambdas)
	if len(rows) != nCal+nFix {
		t.Fatalf("%d rows, want %d calibrated + %d fixed-scale", len(rows), nCal, nFix)
	}
	// The majority share of each split's test rows, recomputed.
	proto, err := protocol.New(cfg.Protocol)
	if err != nil {
		t.Fatal(err)
	}
	majority := make([]float64, cfg.Splits)
	for s := range majority {
		_, test, err := proto.Split(cfg.Seed + uint64(s))
		if err != nil {
			t.Fatal(err)
		}
		pos := 0
		for _, y := range test.Y {
			if y > 0 {
				pos++
			}
		}
		majority[s] = float64(max(pos, len(test.Y)-pos)) / float64(len(test.Y))
	}
	byEps := map[float64][]float64{}
	for i, r := range rows {
		if r.Majority != majority[r.Split] {
			t.Errorf("row %d: majority share %v, want %v (split %d's test rows)", i, r.Majority, majority[r.Split], r.Split)
		}
		wantMode := Calibrated
		if i >= nCal {
			wantMode = FixedScale
		}
		if r.Mode != wantMode || r.Dataset != "synthetic" || r.Mechanism != string(perturb.Gamma) || r.NoiseSource != perturb.SourceSeeded {
			t.Fatalf("row %d: %+v", i, r)
		}
		if r.Route != "strongly-convex-sgd" {
			t.Errorf("row %d: route %q, want the strongly convex SGD route", i, r.Route)
		}
		// n = 2400 training rows, L = 1, mu = 0.85 lambda: Delta <= 2/(mu n).
		if bound := 2 / (0.85 * r.Lambda * 2400); r.Sensitivity > bound*(1+1e-9) {
			t.Errorf("row %d: Delta = %v above 2L/(mu n) = %v", i, r.Sensitivity, bound)
		}
		if r.AccNonPrivate < 0.8 {
			t.Errorf("row %d: non-private accuracy %v, want >= 0.8 on a planted model with ||theta|| = 12", i, r.AccNonPrivate)
		}
		if r.Mode == Calibrated {
			byEps[r.Epsilon] = append(byEps[r.Epsilon], r.AccPrivate)
			if want := r.Sensitivity / r.Epsilon; math.Abs(r.NoiseScale-want) > 1e-12*want {
				t.Errorf("row %d: gamma scale %v, want Delta/eps = %v", i, r.NoiseScale, want)
			}
		}
	}
	lo, hi := floats.Sum(byEps[0.1])/float64(len(byEps[0.1])), floats.Sum(byEps[10])/float64(len(byEps[10]))
	if !(hi > lo+0.05) {
		t.Errorf("mean private accuracy %.3f at eps = 10, %.3f at eps = 0.1: want it to grow with eps", hi, lo)
	}
	// Fixed-scale rows: the scale is that of eps = 1 at the middle lambda,
	// and the eps bought is Delta/scale.
	scale := rows[nCal].NoiseScale
	for _, r := range rows[nCal:] {
		if math.Abs(r.NoiseScale-scale) > 1e-9*scale || math.Abs(r.Epsilon-r.Sensitivity/scale) > 1e-9*r.Epsilon {
			t.Errorf("fixed row %+v: want scale %v and eps = Delta/scale", r, scale)
		}
	}
}

func TestSweepDeterministic(t *testing.T) {
	cfg := smallSweep(t)
	cfg.Splits, cfg.FixedScale = 2, -1
	a, err := Sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) || len(a) != 12 {
		t.Fatalf("%d and %d rows, want 12", len(a), len(b))
	}
	for i := range a {
		a[i].TrainTime, b[i].TrainTime = 0, 0
		if a[i] != b[i] {
			t.Fatalf("row %d differs between two runs with the same seed:\n%+v\n%+v", i, a[i], b[i])
		}
	}
	cfg.Seed++
	c, err := Sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for i := range a {
		if a[i].AccPrivate == c[i].AccPrivate {
			same++
		}
	}
	if same == len(a) {
		t.Error("another seed gave the same private accuracies")
	}
}

func TestSweepAnalyticGaussian(t *testing.T) {
	cfg := smallSweep(t)
	cfg.Splits, cfg.Lambdas, cfg.FixedScale = 1, []float64{1e-2}, -1
	cfg.Mechanism = perturb.AnalyticGaussian
	rows, err := Sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.PrivacyDelta != DefaultDelta || r.NoiseScaleName != "sigma" {
			t.Errorf("row %+v: want delta %v and a sigma", r, DefaultDelta)
		}
		want, err := perturb.AnalyticGaussianSigma(r.Epsilon, r.PrivacyDelta, r.Sensitivity)
		if err != nil || math.Abs(want-r.NoiseScale) > 1e-9*want {
			t.Errorf("sigma %v, want %v (%v)", r.NoiseScale, want, err)
		}
	}
}

func TestSweepErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		edit func(*SweepConfig)
		want error
	}{
		{"unknown mechanism", func(c *SweepConfig) { c.Mechanism = "paper-laplace" }, ErrConfig},
		{"classical gaussian at eps >= 1", func(c *SweepConfig) { c.Mechanism = perturb.Gaussian }, ErrConfig},
		{"negative eps", func(c *SweepConfig) { c.Epsilons = []float64{-1} }, ErrConfig},
		{"zero lambda", func(c *SweepConfig) { c.Lambdas = []float64{0, 1} }, ErrConfig},
		{"NaN lambda", func(c *SweepConfig) { c.Lambdas = []float64{math.NaN()} }, ErrConfig},
		{"repeated lambda", func(c *SweepConfig) { c.Lambdas = []float64{1e-3, 1e-3} }, ErrConfig},
		{"pure L1", func(c *SweepConfig) { c.L1Ratio = 1 }, ErrConfig},
		{"negative splits", func(c *SweepConfig) { c.Splits = -1 }, ErrConfig},
		{"infinite fixed scale", func(c *SweepConfig) { c.FixedScale = math.Inf(1) }, ErrConfig},
		{"bad test fraction", func(c *SweepConfig) { c.Protocol.TestFrac = 1 }, protocol.ErrConfig},
		{"unknown data set", func(c *SweepConfig) { c.Protocol = protocol.Config{Dataset: "mnist", DataDir: dir} }, protocol.ErrConfig},
		{"no data set", func(c *SweepConfig) { c.Protocol = protocol.Config{} }, protocol.ErrConfig},
		{"csv without label", func(c *SweepConfig) { c.Protocol = protocol.Config{Dataset: protocol.CSV, CSVFile: "x.csv"} }, protocol.ErrConfig},
		{"no data directory", func(c *SweepConfig) { c.Protocol = protocol.Config{Dataset: protocol.Adult} }, protocol.ErrNoData},
		{"missing data directory", func(c *SweepConfig) {
			c.Protocol = protocol.Config{Dataset: protocol.Adult, DataDir: filepath.Join(dir, "none")}
		}, protocol.ErrNoData},
		{"data set not in directory", func(c *SweepConfig) { c.Protocol = protocol.Config{Dataset: protocol.GeneAll, DataDir: dir} }, protocol.ErrNoData},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := smallSweep(t)
			tc.edit(&cfg)
			_, err := Sweep(context.Background(), cfg)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSweepCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Sweep(ctx, smallSweep(t)); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

func TestWriteSweep(t *testing.T) {
	cfg := smallSweep(t)
	cfg.Splits = 2
	rows, err := Sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum := Summarize(rows, "a note")
	if sum.Splits != 2 || len(sum.Best) != 3 || len(sum.FixedPoints) != 2 || sum.Notes[0] != "a note" {
		t.Fatalf("summary %+v", sum)
	}
	for _, b := range sum.Best {
		if b.N != 2 || !(b.Mean > 0 && b.Mean <= 1) {
			t.Errorf("best %+v", b)
		}
	}
	dir := filepath.Join(t.TempDir(), "out")
	paths, err := WriteSweep(dir, rows, sum, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 5 {
		t.Fatalf("wrote %v, want results.csv, summary.json, fig1.png, frontier.png, fig2.png", paths)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if len(lines) != len(rows)+1 || !strings.HasPrefix(lines[0], "dataset,mode,split,lambda,epsilon") {
		t.Errorf("results.csv has %d lines (want %d), header %q", len(lines), len(rows)+1, lines[0])
	}
	for _, name := range []string{"fig1.png", "fig2.png", "frontier.png"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, pngHeader) || len(b) < 1000 {
			t.Errorf("%s is not a PNG image (%d bytes)", name, len(b))
		}
	}
	var table bytes.Buffer
	if err := sum.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "non-private") || !strings.Contains(table.String(), "fixed noise scale") {
		t.Errorf("table:\n%s", table.String())
	}
}

func TestSummaryBest(t *testing.T) {
	rows := []Result{
		{Mode: Calibrated, Split: 0, Lambda: 1, Epsilon: 1, AccPrivate: 0.6, AccNonPrivate: 0.9},
		{Mode: Calibrated, Split: 1, Lambda: 1, Epsilon: 1, AccPrivate: 0.8, AccNonPrivate: 0.7},
		{Mode: Calibrated, Split: 0, Lambda: 2, Epsilon: 1, AccPrivate: 0.75, AccNonPrivate: 0.8},
		{Mode: Calibrated, Split: 1, Lambda: 2, Epsilon: 1, AccPrivate: 0.75, AccNonPrivate: 0.8},
	}
	s := Summarize(rows)
	if len(s.Best) != 1 || s.Best[0].Lambda != 2 || s.Best[0].Mean != 0.75 || s.Best[0].Std != 0 {
		t.Errorf("best %+v, want lambda 2, mean 0.75, std 0", s.Best)
	}
	if s.NonPrivate.Lambda != 1 || math.Abs(s.NonPrivate.Mean-0.8) > 1e-15 || math.Abs(s.NonPrivate.Std-math.Sqrt(0.02)) > 1e-12 {
		t.Errorf("non-private %+v, want lambda 1, mean 0.8, std sqrt(0.02)", s.NonPrivate)
	}
	if s.Majority != (Stat{}) {
		t.Errorf("majority %+v of rows that record none, want the zero Stat", s.Majority)
	}
	// One majority share per split, whatever the number of its rows.
	rows[0].Majority, rows[2].Majority = 0.6, 0.6
	rows[1].Majority, rows[3].Majority = 0.7, 0.7
	s = Summarize(rows)
	if s.Majority.N != 2 || math.Abs(s.Majority.Mean-0.65) > 1e-15 {
		t.Errorf("majority %+v, want mean 0.65 over 2 splits", s.Majority)
	}
}

func TestFeatSelSynthetic(t *testing.T) {
	cfg := FeatSelConfig{
		Protocol:   syntheticProtocol(t),
		Splits:     2,
		Lambdas:    []float64{1e-3, 1e-2},
		Epsilons:   []float64{1, 10},
		Thresholds: []float64{0.1, 1},
		Passes:     3,
		Seed:       2,
	}
	rows, err := FeatSel(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * 2 * 2 * 3; len(rows) != want {
		t.Fatalf("%d rows, want %d (splits x lambdas x eps x (1 dynamic + 2 static))", len(rows), want)
	}
	for _, r := range rows {
		if r.Features != 8 {
			t.Errorf("%d candidate features, want 8 (the bias excluded)", r.Features)
		}
		if r.Rule == RuleDynamic && (r.Rate != DefaultRate || !(r.Threshold > 0)) {
			t.Errorf("dynamic row %+v", r)
		}
		if r.Rule == RuleStatic && r.Threshold != 0.1 && r.Threshold != 1 {
			t.Errorf("static row %+v", r)
		}
		if !(r.F1 >= 0 && r.F1 <= 1) || r.Selected > r.Features || r.Reference > r.Features {
			t.Errorf("row %+v", r)
		}
	}
	dir := t.TempDir()
	if _, err := WriteFeatSel(dir, rows, false); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fig3.png", "fig5.png"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.HasPrefix(b, pngHeader) {
			t.Errorf("%s: not a PNG image (%v)", name, err)
		}
	}
	var table bytes.Buffer
	if err := WriteFeatSelTable(&table, rows); err != nil || !strings.Contains(table.String(), "eps=10") {
		t.Errorf("table (%v):\n%s", err, table.String())
	}
}

// TestSweepMatrix: a sweep on the protocol of a matrix
// (protocol.Matrix) gives the rows of the same sweep on the data set it
// holds.
func TestSweepMatrix(t *testing.T) {
	ds, _, err := synthetic.Logistic(300, 3, 1, synthetic.LogisticOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := protocol.Matrix("planted", ds.X, ds.Y)
	if err != nil {
		t.Fatal(err)
	}
	cfg := SweepConfig{Protocol: p, Splits: 1, Lambdas: []float64{1e-2}, Epsilons: []float64{1}, Passes: 2, Seed: 1, FixedScale: -1}
	got, err := Sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Protocol = protocol.Config{Dataset: "planted", Data: ds}
	want, err := Sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i].TrainTime, want[i].TrainTime = 0, 0
	}
	if !reflect.DeepEqual(got, want) || len(got) != 1 {
		t.Errorf("sweep on the matrix %+v, on its data set %+v", got, want)
	}
}

// realDir returns the shared data directory, or skips the test.
func realDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "datasets")
	entry, _ := paper.Lookup(name)
	if _, err := os.Stat(filepath.Join(dir, entry.Dir, entry.Marker)); err != nil {
		t.Skipf("real data set %s not available in %s: %v", name, dir, err)
	}
	return dir
}

// TestSweepAdultSmoke runs a small Adult sweep (1 split, 2 lambdas): the
// non-private accuracy is near the reference 0.8457 and eps = 5 keeps most
// of it.
func TestSweepAdultSmoke(t *testing.T) {
	dir := realDir(t, protocol.Adult)
	rows, err := Sweep(context.Background(), SweepConfig{
		Protocol: protocol.Config{Dataset: protocol.Adult, DataDir: dir},
		Splits:   1, Lambdas: []float64{1e-4, 1e-3}, Epsilons: []float64{1, 5}, FixedScale: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	for _, r := range rows {
		if r.AccNonPrivate < 0.82 || r.AccNonPrivate > 0.87 {
			t.Errorf("lambda %g: non-private accuracy %.4f, want near 0.845", r.Lambda, r.AccNonPrivate)
		}
		if r.Lambda == 1e-3 && r.Epsilon == 5 && r.AccPrivate < 0.8 {
			t.Errorf("lambda 1e-3, eps 5: private accuracy %.4f, want >= 0.8", r.AccPrivate)
		}
	}
}

// TestRegistryNames checks that the names of the paper's data sets are the
// registry's, and that Adult's grid is DefaultLambdas.
func TestRegistryNames(t *testing.T) {
	if want := []string{protocol.Adult, protocol.LastFM, protocol.GeneAll, protocol.CSV}; !slices.Equal(protocol.DataSets, want) {
		t.Errorf("DataSets = %v, want %v", protocol.DataSets, want)
	}
	for _, name := range []string{protocol.Adult, protocol.LastFM, protocol.GeneAll} {
		if _, ok := paper.Lookup(name); !ok {
			t.Errorf("%s is not in the registry", name)
		}
	}
	if got := DefaultLambdasFor(protocol.Adult); !slices.Equal(got, DefaultLambdas) {
		t.Errorf("Adult's grid %v, want DefaultLambdas %v", got, DefaultLambdas)
	}
	if got := DefaultLambdasFor(protocol.CSV); !slices.Equal(got, DefaultLambdas) {
		t.Errorf("csv grid %v", got)
	}
	if got := DefaultLambdasFor(protocol.GeneAll); got[0] != 1e-3 || got[len(got)-1] != 1 {
		t.Errorf("gene_all grid %v", got)
	}
	// The grid is a copy.
	DefaultLambdasFor(protocol.LastFM)[0] = -1
	if DefaultLambdasFor(protocol.LastFM)[0] != 1e-4 {
		t.Error("DefaultLambdasFor returned the registry's slice")
	}
}

// TestKnobSweep runs a small knob grid with two mechanisms and the private
// selection: the rows, the CSV columns, the families of the frontier and
// their order (tuning more knobs never loses on the test accuracy), the
// selection's ledger, and the frontier figure.
func TestKnobSweep(t *testing.T) {
	cfg := smallSweep(t)
	cfg.Splits = 2
	cfg.Epsilons = []float64{1, 10}
	cfg.Mechanisms = []dp.Mechanism{perturb.Gamma, perturb.AnalyticGaussian}
	cfg.Knobs = Knobs{L1Ratios: []float64{0.15, 0}, Clips: []float64{0, 0.1}}
	cfg.Select = SelectConfig{ValFrac: 0.2, Eta: 1, MeanRuns: 30}
	cfg.FixedScale = -1
	rows, err := Sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	settings := len(cfg.Lambdas) * 2 * 2
	nCal := cfg.Splits * settings * len(cfg.Epsilons) * 2
	nSel := cfg.Splits * len(cfg.Epsilons)
	if len(rows) != nCal+nSel {
		t.Fatalf("%d rows, want %d calibrated and %d selected", len(rows), nCal, nSel)
	}
	sum := Summarize(rows)
	if want := []string{FamilyLambda, KnobL1Ratio, KnobClip, FamilyAll}; !slices.Equal(sum.Families, want) {
		t.Errorf("families %v, want %v", sum.Families, want)
	}
	if len(sum.Best) != 4 || len(sum.Frontier) != 16 || len(sum.Selected) != 2 {
		t.Fatalf("best %d, frontier %d, selected %d", len(sum.Best), len(sum.Frontier), len(sum.Selected))
	}
	get := func(m, fam string, eps float64) FrontierPoint {
		for _, p := range sum.Frontier {
			if p.Mechanism == m && p.Family == fam && p.Epsilon == eps {
				return p
			}
		}
		t.Fatalf("no frontier point %s %s %g", m, fam, eps)
		return FrontierPoint{}
	}
	for _, p := range sum.Frontier {
		if !p.Setting.InFamily(p.Family) {
			t.Errorf("%s wins family %s it is not in", p.Setting, p.Family)
		}
		lam, all := get(p.Mechanism, FamilyLambda, p.Epsilon), get(p.Mechanism, FamilyAll, p.Epsilon)
		if p.Mean < lam.Mean || p.Mean > all.Mean {
			t.Errorf("%s %s eps %g: %v outside [lambda %v, all %v]", p.Mechanism, p.Family, p.Epsilon, p.Mean, lam.Mean, all.Mean)
		}
	}
	for _, p := range sum.Selected {
		if math.Abs(p.EpsSelect+p.EpsRelease-p.Epsilon) > 1e-12 || p.EpsRelease != selection.RunEpsilon(p.Epsilon, 1) || !(3*p.EpsRelease <= p.Epsilon) || p.N != 2 {
			t.Errorf("selected %+v: want eps_select + eps_release = eps, eps_release = eps/3 rounded down (eta 1), 2 splits", p)
		}
	}
	for _, r := range rows {
		if r.Mode == Selected && (r.Mechanism != string(perturb.Gamma) || r.NoiseSource != perturb.SourceSeeded) {
			t.Errorf("selected row %+v: want a seeded gamma release (the only pure mechanism)", r)
		}
	}
	var buf bytes.Buffer
	if err := sum.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"privately selected", "gaussian-analytic (delta 1e-05)", "frontier, gamma", "eps_select + eps_release"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
	dir := t.TempDir()
	if _, err := WriteSweep(dir, rows, sum, false); err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	header := strings.SplitN(string(csv), "\n", 2)[0]
	if !strings.HasSuffix(header, ",l1_ratio,clip,dropout,batch,passes,average,varied,eps_select,eps_release,majority,data_file") {
		t.Errorf("results.csv header %q", header)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "frontier.png")); err != nil || !bytes.HasPrefix(b, pngHeader) {
		t.Errorf("frontier.png: %v", err)
	}
}

func TestKnobErrors(t *testing.T) {
	for name, k := range map[string]Knobs{
		"empty clips":       {Clips: []float64{}},
		"negative clip":     {Clips: []float64{0, -1}},
		"repeated clip":     {Clips: []float64{0.1, 0.1}},
		"infinite clip":     {Clips: []float64{math.Inf(1)}},
		"dropout 0":         {Dropouts: []float64{0}},
		"dropout above 1":   {Dropouts: []float64{1.5}},
		"batch 0":           {Batches: []int{0}},
		"repeated batch":    {Batches: []int{4, 4}},
		"passes 0":          {Passes: []int{0}},
		"l1 ratio 1":        {L1Ratios: []float64{1}},
		"l1 ratio NaN":      {L1Ratios: []float64{math.NaN()}},
		"repeated l1":       {L1Ratios: []float64{0, 0}},
		"repeated average":  {Averages: []bool{true, true}},
		"empty average":     {Averages: []bool{}},
		"empty dropouts":    {Dropouts: []float64{}},
		"repeated dropouts": {Dropouts: []float64{0.5, 0.5}},
	} {
		cfg := smallSweep(t)
		cfg.Knobs = k
		if _, err := Sweep(context.Background(), cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	cfg := smallSweep(t)
	cfg.Mechanisms = []dp.Mechanism{perturb.Gamma, perturb.Gamma}
	if _, err := Sweep(context.Background(), cfg); !errors.Is(err, ErrConfig) {
		t.Errorf("repeated mechanism: %v", err)
	}
	cfg = smallSweep(t)
	cfg.Mechanisms = []dp.Mechanism{perturb.AnalyticGaussian}
	cfg.Select.ValFrac = 0.2
	if _, err := Sweep(context.Background(), cfg); !errors.Is(err, ErrConfig) {
		t.Errorf("selection without a pure mechanism: %v", err)
	}
}

// TestSweepObjective runs the training-time mechanisms beside gamma: their
// rows are ridge settings minimized exactly, one per (split, effective
// lambda, eps), a lambda below the floor raised to the floor once, seeded,
// and reported in the same summary.
func TestSweepObjective(t *testing.T) {
	cfg := smallSweep(t)
	cfg.Splits, cfg.FixedScale = 2, -1
	// At n = 2400 the floor of objective is about 2e-3 at eps = 0.1, 1.6e-4
	// at eps = 1 and 7e-7 at eps = 10: at eps = 0.1, 1e-6 and 1e-3 are both
	// below it and give one row, at the floor.
	cfg.Lambdas = []float64{1e-6, 1e-3, 1e-2}
	cfg.Mechanisms = []dp.Mechanism{perturb.Gamma, perturb.Objective, perturb.AMP}
	cfg.Knobs = Knobs{Clips: []float64{0, 0.5}}
	rows, err := Sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		mech   string
		split  int
		eps    float64
		lambda float64
	}
	seen := map[key]bool{}
	count := map[string]int{}
	for _, r := range rows {
		count[r.Mechanism]++
		if r.Mechanism == string(perturb.Gamma) {
			continue
		}
		k := key{r.Mechanism, r.Split, r.Epsilon, r.Lambda}
		if seen[k] {
			t.Errorf("row %+v repeats an effective lambda", r)
		}
		seen[k] = true
		if r.Setting != objectiveSetting(r.Lambda) || r.NoiseSource != perturb.SourceSeeded || r.Mode != Calibrated {
			t.Errorf("row %+v: want the ridge setting, seeded, calibrated", r)
		}
		delta := 0.0
		if r.Mechanism == string(perturb.AMP) {
			delta = DefaultDelta
		}
		if r.PrivacyDelta != delta {
			t.Errorf("row %+v: delta %v, want %v", r, r.PrivacyDelta, delta)
		}
		floor, err := objpert.LambdaFloor(dp.Mechanism(r.Mechanism), r.Epsilon, delta,
			objpert.Problem{Loss: losses.Logistic{}, N: 2400, D: 9, K: 1, Kappa: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.Lambda < floor || (r.Lambda != floor && !slices.Contains(cfg.Lambdas, r.Lambda)) {
			t.Errorf("row %+v: lambda %v, want a grid lambda at or above the floor %v, or the floor", r, r.Lambda, floor)
		}
		if r.AccNonPrivate < 0.8 {
			t.Errorf("row %+v: non-private accuracy", r)
		}
	}
	// gamma: every split, setting (3 lambdas x 2 clips) and eps.
	if count["gamma"] != 2*6*3 || count["objective"] == 0 || count["amp"] == 0 || count["objective"] > 2*3*3 {
		t.Errorf("rows per mechanism %v", count)
	}
	sum := Summarize(rows)
	if !slices.Equal(sum.Mechanisms, []string{"gamma", "objective", "amp"}) {
		t.Errorf("summary mechanisms %v", sum.Mechanisms)
	}
	var buf bytes.Buffer
	if err := sum.WriteTable(&buf); err != nil || !strings.Contains(buf.String(), "objective") || !strings.Contains(buf.String(), "exact") {
		t.Errorf("table (%v):\n%s", err, buf.String())
	}
	if best := sum.best("objective", 10); !(best.Mean > 0.85) {
		t.Errorf("objective at eps = 10: %v", best)
	}

	// Training-time mechanisms only: no SGD runs, the lambda family only,
	// no fixed-scale rows; a private selection needs an output mechanism.
	cfg.Mechanisms = []dp.Mechanism{perturb.Objective}
	cfg.FixedScale = 0
	only, err := Sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(only) != count["objective"] {
		t.Errorf("objective alone: %d rows, beside gamma %d", len(only), count["objective"])
	}
	// A private selection among objective candidates alone: one row per
	// split and eps, a grid lambda or the floor at eps_run, its ledger
	// adding up to eps.
	cfg.Select = SelectConfig{ValFrac: 0.2, Eta: 1, MeanRuns: 20}
	sel, err := Sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	nsel := 0
	for _, r := range sel {
		if r.Mode != Selected {
			continue
		}
		nsel++
		floor, err := objpert.LambdaFloor(perturb.Objective, r.Epsilon/3, 0, objpert.Problem{Loss: losses.Logistic{}, N: 1920, D: 9, K: 1, Kappa: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.Mechanism != string(perturb.Objective) || r.Setting != objectiveSetting(r.Lambda) || r.Lambda < floor ||
			math.Abs(r.EpsSelect+r.EpsRelease-r.Epsilon) > 1e-12 || math.Abs(r.EpsRelease-r.Epsilon/3) > 1e-12 {
			t.Errorf("selected row %+v (floor at eps_run %v)", r, floor)
		}
		if r.Epsilon == 10 && !(r.AccPrivate > 0.8) {
			t.Errorf("selected objective release at eps = 10: accuracy %v", r.AccPrivate)
		}
	}
	if nsel != 2*3 {
		t.Errorf("%d selected rows, want one per split and eps (6)", nsel)
	}
	// Mixed with trained candidates: every selected row is a gamma or an
	// objective release.
	cfg.Mechanisms = []dp.Mechanism{perturb.Gamma, perturb.Objective, perturb.AMP}
	mixed, err := Sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	chosen := map[string]int{}
	for _, r := range mixed {
		if r.Mode == Selected {
			chosen[r.Mechanism]++
		}
	}
	if chosen["gamma"]+chosen["objective"] != 6 || len(chosen) > 2 {
		t.Errorf("mechanisms of the selected rows %v, want 6 gamma or objective", chosen)
	}
	cfg.Mechanisms = []dp.Mechanism{perturb.AMP}
	if _, err := Sweep(context.Background(), cfg); !errors.Is(err, ErrConfig) {
		t.Errorf("selection with amp only: %v, want ErrConfig", err)
	}
	cfg.Select = SelectConfig{}
	cfg.Mechanisms = nil
	cfg.Mechanism = perturb.AMP
	cfg.Delta = 2
	if _, err := Sweep(context.Background(), cfg); !errors.Is(err, ErrConfig) {
		t.Errorf("amp with delta 2: %v, want ErrConfig", err)
	}
}

func TestDataFile(t *testing.T) {
	cfg := SweepConfig{
		Protocol: protocol.Config{Dataset: protocol.CSV, CSVFile: filepath.Join("..", "datasets", "data", "wdbc.csv"), Label: "diagnosis"},
		Splits:   1, Lambdas: []float64{1e-2}, Epsilons: []float64{1}, Passes: 1, FixedScale: -1,
	}
	rows, err := Sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Dataset != protocol.CSV || r.DataFile != "wdbc.csv" {
			t.Errorf("row names its data %q, %q; want csv, wdbc.csv", r.Dataset, r.DataFile)
		}
	}
	if s := Summarize(rows); s.DataFile != "wdbc.csv" {
		t.Errorf("summary names its data file %q, want wdbc.csv", s.DataFile)
	}
	p, err := protocol.New(syntheticProtocol(t))
	if err != nil {
		t.Fatal(err)
	}
	if f := p.DataFile(); f != "" {
		t.Errorf("in-memory data names the data file %q, want none", f)
	}
}

// TestNonPrivateCurve checks that the non-private curve of a figure is that
// of its mechanism: objective rows run at raised lambdas must not add
// points to the curve of gamma.
func TestNonPrivateCurve(t *testing.T) {
	rows := []Result{
		{Mode: Calibrated, Mechanism: "gamma", Lambda: 1e-3, AccNonPrivate: 0.9},
		{Mode: Calibrated, Mechanism: "objective", Lambda: 1.3e-3, AccNonPrivate: 0.5},
		{Mode: Calibrated, Mechanism: "gamma", Lambda: 1e-2, AccNonPrivate: 0.8},
		{Mode: Calibrated, Mechanism: "objective", Lambda: 1e-2, AccNonPrivate: 0.4, Split: 1},
	}
	c := nonPrivateCurve(rows, "gamma")
	if !slices.Equal(c.lambdas, []float64{1e-3, 1e-2}) || c.stats[0].Mean != 0.9 || c.stats[1].Mean != 0.8 || c.stats[1].N != 1 {
		t.Errorf("gamma's non-private curve %+v, want lambdas 1e-3 and 1e-2 at 0.9 and 0.8", c)
	}
}
