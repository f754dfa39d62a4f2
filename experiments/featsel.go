package experiments

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/experiments/internal/chart"
	"github.com/stabpriv/stabpriv/experiments/protocol"
	"github.com/stabpriv/stabpriv/featsel"
)

// Defaults of FeatSel.
const (
	// DefaultRate is the dynamic threshold's false-selection rate q: a
	// weight whose true value is zero survives the noise with probability q.
	DefaultRate = 0.05
)

// DefaultThresholds are the static thresholds T of Figure 5.
var DefaultThresholds = []float64{0.05, 0.1, 0.25, 0.5, 1}

// Selection rules of a FeatSelResult.
const (
	RuleDynamic = "dynamic"
	RuleStatic  = "static"
)

// FeatSelConfig sets up FeatSel. Every zero value is documented; the shared
// fields mean what they mean in SweepConfig.
type FeatSelConfig struct {
	// Protocol selects the data set and the preprocessing. Required.
	Protocol protocol.Config
	// Splits, Lambdas, Epsilons, Mechanism, Delta, Passes, Seed and Logger
	// are as in SweepConfig (zero: 10 splits, DefaultLambdasFor(dataset),
	// DefaultEpsilons, gamma, 1e-5, 10 passes).
	Splits    int
	Lambdas   []float64
	Epsilons  []float64
	Mechanism dp.Mechanism
	Delta     float64
	Passes    int
	Seed      uint64
	Logger    logrus.FieldLogger
	// L1Ratio is the elastic net's L1 share, in (0, 1). Zero means the
	// paper's 0.15. A larger share does not make the SGD weights sparse:
	// the proximal step's threshold eta_t*lambda*alpha shrinks with the
	// step, so few weights end exactly at zero (on Adult's 32 components,
	// 32 of 32 non-zero at alpha = 0.15 and 0.5, about 30 at 0.9 and
	// lambda = 1e-2). Hence the reference selection is the non-private
	// weights thresholded at the same T, not their support.
	L1Ratio float64
	// Rate is the dynamic threshold's false-selection rate q in (0, 1)
	// (featsel.DynamicThreshold; per feature for a multiclass model). Zero
	// means DefaultRate.
	Rate float64
	// Thresholds are the static thresholds of Figure 5. Nil means
	// DefaultThresholds.
	Thresholds []float64
}

// FeatSelResult is one selection: one row of featsel.csv.
type FeatSelResult struct {
	Dataset string `json:"dataset"`
	// DataFile is as in Result.
	DataFile     string  `json:"data_file,omitempty"`
	Split        int     `json:"split"`
	Lambda       float64 `json:"lambda"`
	L1Ratio      float64 `json:"l1_ratio"`
	Epsilon      float64 `json:"epsilon"`
	PrivacyDelta float64 `json:"privacy_delta"`
	Mechanism    string  `json:"mechanism"`
	NoiseScale   float64 `json:"noise_scale"`
	// Rule is RuleDynamic (Rate set) or RuleStatic; Threshold is the T used.
	Rule      string  `json:"rule"`
	Rate      float64 `json:"rate,omitempty"`
	Threshold float64 `json:"threshold"`
	// Features is the number of candidate features (the bias excluded);
	// Support the number of non-zero non-private weights; Selected and
	// Reference the sizes of the private and non-private selections at T.
	Features  int `json:"features"`
	Support   int `json:"support"`
	Selected  int `json:"selected"`
	Reference int `json:"reference"`
	// Precision, Recall, F1 and Jaccard compare the private selection with
	// the non-private one at the same T (featsel.NewReport); F1Support
	// compares it with the support of the non-private weights (T = 0).
	Precision     float64 `json:"precision"`
	Recall        float64 `json:"recall"`
	F1            float64 `json:"f1"`
	Jaccard       float64 `json:"jaccard"`
	F1Support     float64 `json:"f1_support"`
	ExpectedFlips float64 `json:"expected_flips"`
}

// dropBias returns the K x D' weights without the bias column (when the
// last feature is the bias) and D'.
func dropBias(w []float64, k, d int, features []string) ([]float64, int) {
	if d == 0 || len(features) != d || features[d-1] != datasets.BiasFeature {
		return w, d
	}
	out, _ := featsel.WithoutBias(w, k, d) // the shape is the model's
	return out, d - 1
}

// FeatSel runs the paper's feature-selection experiments (Figures 3 and 5):
// for every split and lambda it trains once as Sweep does (with the elastic
// net's L1 share cfg.L1Ratio), releases the weights once per eps (seeded
// noise, a separate release per eps), and selects the features whose
// released weight clears a threshold T (the bias is not a candidate):
// the dynamic T set from the release's noise scale with false-selection
// rate cfg.Rate (Figure 3), and each static T of cfg.Thresholds (Figure 5).
// Every selection is post-processing of its release. The non-private
// reference and the metrics use the noise-free weights: they are for
// evaluation only. Errors are those of Sweep.
func FeatSel(ctx context.Context, cfg FeatSelConfig) ([]FeatSelResult, error) {
	set, err := checkSweep(SweepConfig{Epsilons: cfg.Epsilons, Mechanism: cfg.Mechanism, Delta: cfg.Delta})
	if err != nil {
		return nil, err
	}
	rate := cfg.Rate
	if rate == 0 {
		rate = DefaultRate
	}
	if !(rate > 0 && rate < 1) {
		return nil, fmt.Errorf("%w: rate %v, want in (0, 1)", ErrConfig, rate)
	}
	thresholds := slices.Clone(cfg.Thresholds)
	if thresholds == nil {
		thresholds = slices.Clone(DefaultThresholds)
	}
	for _, t := range thresholds {
		if math.IsNaN(t) || math.IsInf(t, 0) || t < 0 {
			return nil, fmt.Errorf("%w: threshold %v, want finite >= 0", ErrConfig, t)
		}
	}
	g, err := newGrid(gridConfig{Protocol: cfg.Protocol, Splits: cfg.Splits, Lambdas: cfg.Lambdas, L1Ratio: cfg.L1Ratio,
		Passes: cfg.Passes, Seed: cfg.Seed, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	specs := []featsel.ThresholdSpec{{Kind: featsel.Dynamic, Rate: rate, PerFeature: true}}
	for _, t := range thresholds {
		specs = append(specs, featsel.StaticThreshold(t))
	}
	rows, err := each(ctx, g, func(f *fit) ([]FeatSelResult, error) {
		k := f.model.K
		ref, d := dropBias(f.model.W, k, f.model.D, f.test.Features)
		support, _, err := featsel.Select(ref, k, d, 0)
		if err != nil {
			return nil, err
		}
		var out []FeatSelResult
		for ei, eps := range set.epsilons {
			m, cert, err := releaseFit(f, set.mech, eps, set.delta, noiseSeed(g.seed, f.split, f.li, ei))
			if err != nil {
				return nil, err
			}
			noise, err := featsel.NoiseOf(&cert.Claim)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrConfig, err)
			}
			noisy, _ := dropBias(m.W, k, m.D, f.test.Features)
			for _, spec := range specs {
				rep, err := featsel.NewReport(noisy, ref, k, d, spec, noise)
				if err != nil {
					return nil, err
				}
				vsSupport, err := featsel.Compare(rep.Selected, support)
				if err != nil {
					return nil, err
				}
				r := FeatSelResult{
					Dataset: g.proto.Name(), DataFile: g.proto.DataFile(), Split: f.split, Lambda: f.lambda, L1Ratio: g.l1Ratio,
					Epsilon: cert.Epsilon, PrivacyDelta: cert.Delta, Mechanism: string(cert.Mechanism), NoiseScale: cert.NoiseScale,
					Rule: RuleStatic, Threshold: rep.Threshold, Features: d, Support: len(support),
					Selected: len(rep.Selected), Reference: len(rep.Reference),
					Precision: rep.Precision, Recall: rep.Recall, F1: rep.F1, Jaccard: rep.Jaccard,
					F1Support: vsSupport.F1, ExpectedFlips: rep.ExpectedFlips,
				}
				if spec.Kind == featsel.Dynamic {
					r.Rule, r.Rate = RuleDynamic, spec.Rate
				}
				out = append(out, r)
			}
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	g.log.WithFields(logrus.Fields{"rows": len(rows), "took": time.Since(start).Round(time.Millisecond)}).Info("feature selection done")
	return rows, nil
}

// featselHeader is the header of featsel.csv.
var featselHeader = []string{"dataset", "split", "lambda", "l1_ratio", "epsilon", "privacy_delta", "mechanism", "noise_scale",
	"rule", "rate", "threshold", "features", "support", "selected", "reference",
	"precision", "recall", "f1", "jaccard", "f1_support", "expected_flips", "data_file"}

// WriteFeatSelCSV writes the rows as CSV with a header (featsel.csv).
func WriteFeatSelCSV(w io.Writer, rows []FeatSelResult) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(featselHeader); err != nil {
		return err
	}
	for _, r := range rows {
		rec := []string{r.Dataset, strconv.Itoa(r.Split), fmtG(r.Lambda), fmtG(r.L1Ratio), fmtG(r.Epsilon), fmtG(r.PrivacyDelta),
			r.Mechanism, fmtG(r.NoiseScale), r.Rule, fmtG(r.Rate), fmtG(r.Threshold),
			strconv.Itoa(r.Features), strconv.Itoa(r.Support), strconv.Itoa(r.Selected), strconv.Itoa(r.Reference),
			fmtG(r.Precision), fmtG(r.Recall), fmtG(r.F1), fmtG(r.Jaccard), fmtG(r.F1Support), fmtG(r.ExpectedFlips), r.DataFile}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// featselCurve returns the mean of value per lambda over the rows keep accepts.
func featselCurve(rows []FeatSelResult, keep func(FeatSelResult) bool, value func(FeatSelResult) float64) curve {
	return collectBy(rows, func(r FeatSelResult) float64 { return r.Lambda }, keep, value)
}

// featselAxes describes the rows of a feature-selection experiment.
type featselAxes struct {
	// eps and static are the distinct eps and static thresholds, in
	// increasing order.
	eps, static []float64
	// name names the data (dataName); mech is the mechanism.
	name, mech string
	// rate is the dynamic threshold's false-selection rate (0 without a
	// dynamic row); splits the number of splits.
	rate   float64
	splits int
}

// axesOf returns the featselAxes of the rows.
func axesOf(rows []FeatSelResult) featselAxes {
	var a featselAxes
	splits := map[int]bool{}
	for _, r := range rows {
		a.name, a.mech = dataName(r.Dataset, r.DataFile), r.Mechanism
		splits[r.Split] = true
		if !slices.Contains(a.eps, r.Epsilon) {
			a.eps = append(a.eps, r.Epsilon)
		}
		switch r.Rule {
		case RuleStatic:
			if !slices.Contains(a.static, r.Threshold) {
				a.static = append(a.static, r.Threshold)
			}
		case RuleDynamic:
			a.rate = r.Rate
		}
	}
	slices.Sort(a.eps)
	slices.Sort(a.static)
	a.splits = len(splits)
	return a
}

// staticEpsilon is the eps of Figure 5: 1 when present, else the middle eps.
func staticEpsilon(eps []float64) float64 {
	if slices.Contains(eps, 1) || len(eps) == 0 {
		return 1
	}
	return eps[len(eps)/2]
}

// f1Label is the y label of the feature-selection figures.
func (a featselAxes) f1Label() string {
	return spreadLabel("F1 vs the non-private selection at the same T", a.splits)
}

// figure3Panels returns the panel of Figure 3.
func figure3Panels(rows []FeatSelResult) []chart.Panel {
	a := axesOf(rows)
	pn := chart.Panel{
		Title:  fmt.Sprintf("%s: private feature selection against lambda\ndynamic threshold T (false-selection rate q = %s), %s noise", a.name, short(a.rate), a.mech),
		XLabel: lambdaAxis, YLabel: a.f1Label(), Unit: true,
	}
	for i, e := range a.eps {
		c := featselCurve(rows, func(r FeatSelResult) bool { return r.Rule == RuleDynamic && r.Epsilon == e },
			func(r FeatSelResult) float64 { return r.F1 })
		pn.Curves = append(pn.Curves, fromCurve("eps = "+short(e), i, c))
	}
	return []chart.Panel{pn}
}

// Figure3 writes fig3.png: the F1 of the private selection (dynamic
// threshold) against the non-private selection at the same threshold, per
// eps, against lambda; mean +- std over the splits, the bars clipped to
// [0, 1].
func Figure3(w io.Writer, rows []FeatSelResult) error {
	return chart.WritePNG(w, chart.PanelHeight, figure3Panels(rows)...)
}

// figure5Panels returns the panel of Figure 5.
func figure5Panels(rows []FeatSelResult) []chart.Panel {
	a := axesOf(rows)
	e := staticEpsilon(a.eps)
	pn := chart.Panel{
		Title:  fmt.Sprintf("%s: private feature selection against lambda\nstatic thresholds T, eps = %s, %s noise", a.name, short(e), a.mech),
		XLabel: lambdaAxis, YLabel: a.f1Label(), Unit: true,
	}
	for i, t := range a.static {
		c := featselCurve(rows, func(r FeatSelResult) bool { return r.Rule == RuleStatic && r.Epsilon == e && r.Threshold == t },
			func(r FeatSelResult) float64 { return r.F1 })
		pn.Curves = append(pn.Curves, fromCurve("T = "+short(t), i, c))
	}
	return []chart.Panel{pn}
}

// Figure5 writes fig5.png: the F1 against lambda for each static threshold,
// at eps = 1 (or the middle eps when 1 was not run); mean +- std over the
// splits, the bars clipped to [0, 1].
func Figure5(w io.Writer, rows []FeatSelResult) error {
	return chart.WritePNG(w, chart.PanelHeight, figure5Panels(rows)...)
}

// WriteFeatSelTable writes, per eps, the mean F1 of the dynamic-threshold
// selection at each lambda, and the mean support of the non-private model.
func WriteFeatSelTable(w io.Writer, rows []FeatSelResult) error {
	a := axesOf(rows)
	eps := a.eps
	fmt.Fprintf(w, "%s, %s noise: mean F1 of the private selection (dynamic threshold) vs the non-private one, per lambda\n", a.name, a.mech)
	dyn := func(r FeatSelResult) bool { return r.Rule == RuleDynamic }
	support := featselCurve(rows, dyn, func(r FeatSelResult) float64 { return float64(r.Support) })
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "lambda\tsupport\t")
	for _, e := range eps {
		fmt.Fprintf(tw, "eps=%g\t", e)
	}
	fmt.Fprintln(tw)
	for i, l := range support.lambdas {
		fmt.Fprintf(tw, "%.4g\t%.1f\t", l, support.stats[i].Mean)
		for _, e := range eps {
			c := featselCurve(rows, func(r FeatSelResult) bool { return dyn(r) && r.Epsilon == e && r.Lambda == l },
				func(r FeatSelResult) float64 { return r.F1 })
			fmt.Fprintf(tw, "%.3f\t", c.stats[0].Mean)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// WriteFeatSel writes featsel.csv, fig3.png and fig5.png into dir (created
// if needed) and returns the paths written. An existing file there is
// replaced only with replace (as WriteSweep).
func WriteFeatSel(dir string, rows []FeatSelResult, replace bool) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
	}
	return writeAll(dir, replace, []namedWriter{
		{"featsel.csv", func(w io.Writer) error { return WriteFeatSelCSV(w, rows) }},
		{"fig3.png", func(w io.Writer) error { return Figure3(w, rows) }},
		{"fig5.png", func(w io.Writer) error { return Figure5(w, rows) }},
	})
}
