package experiments

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/experiments/protocol"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/selection"
	"github.com/stabpriv/stabpriv/trainer"
)

// MaxSettings bounds the number of knob settings of a grid (the product of
// the lengths of the knob lists and the lambdas).
const MaxSettings = 20_000

// Knobs are the stability knobs a sweep tunes besides lambda, each a list
// of values with a proven bound (docs/DESIGN.md, section 4): every run is
// certified by the strongly convex SGD route with its actual constants. A
// nil list means one value, the default in parentheses. The first value of
// each list is its baseline: the frontier's families vary one knob at a
// time from the baseline of the others (see Family).
type Knobs struct {
	// L1Ratios are elastic-net L1 shares alpha in [0, 1) (the sweep's
	// L1Ratio, 0.15 by default); mu = lambda (1 - alpha).
	L1Ratios []float64
	// Clips are per-example gradient clipping norms G >= 0, 0 meaning no
	// clipping (0); L becomes min(G, L).
	Clips []float64
	// Dropouts are s in (0, 1] of s-dropout (1, none).
	Dropouts []float64
	// Batches are minibatch sizes b >= 1 (1).
	Batches []int
	// Passes are numbers of SGD passes (the sweep's Passes, 10 by default).
	Passes []int
	// Averages say whether the iterates are averaged (false).
	Averages []bool
}

// Knob names, as in results.csv and the families of the frontier.
const (
	KnobL1Ratio = "l1_ratio"
	KnobClip    = "clip"
	KnobDropout = "dropout"
	KnobBatch   = "batch"
	KnobPasses  = "passes"
	KnobAverage = "average"
)

// knobNames lists the knobs in the order of the outputs.
var knobNames = []string{KnobL1Ratio, KnobClip, KnobDropout, KnobBatch, KnobPasses, KnobAverage}

// Families of the frontier besides one per knob.
const (
	// FamilyLambda tunes lambda alone, every knob at its baseline.
	FamilyLambda = "lambda"
	// FamilyAll tunes every knob together.
	FamilyAll = "all"
)

// withDefaults fills the nil lists and checks every value: out of range,
// not finite or repeated values are errors wrapping ErrConfig.
func (k Knobs) withDefaults(l1Ratio float64, passes int) (Knobs, error) {
	out := Knobs{
		L1Ratios: orDefault(k.L1Ratios, l1Ratio), Clips: orDefault(k.Clips, 0), Dropouts: orDefault(k.Dropouts, 1),
		Batches: orDefault(k.Batches, 1), Passes: orDefault(k.Passes, passes), Averages: orDefault(k.Averages, false),
	}
	floats := []struct {
		name string
		v    []float64
		ok   func(float64) bool
		want string
	}{
		{KnobL1Ratio, out.L1Ratios, func(v float64) bool { return v >= 0 && v < 1 }, "in [0, 1) (mu = lambda(1 - l1 ratio) > 0)"},
		{KnobClip, out.Clips, func(v float64) bool { return check.Finite(v) && v >= 0 }, "finite >= 0 (0: no clipping)"},
		{KnobDropout, out.Dropouts, func(v float64) bool { return v > 0 && v <= 1 }, "in (0, 1]"},
	}
	for _, f := range floats {
		for _, v := range f.v {
			if !f.ok(v) {
				return out, fmt.Errorf("%w: %s %v, want %s", ErrConfig, f.name, v, f.want)
			}
		}
		if err := distinct(f.name, f.v); err != nil {
			return out, err
		}
	}
	for _, b := range out.Batches {
		if b < 1 {
			return out, fmt.Errorf("%w: batch %d, want >= 1", ErrConfig, b)
		}
	}
	for _, p := range out.Passes {
		if p < 1 || p > trainer.MaxPasses {
			return out, fmt.Errorf("%w: passes %d, want 1 to %d", ErrConfig, p, trainer.MaxPasses)
		}
	}
	if err := distinct(KnobBatch, out.Batches); err != nil {
		return out, err
	}
	if err := distinct(KnobPasses, out.Passes); err != nil {
		return out, err
	}
	if err := distinct(KnobAverage, out.Averages); err != nil {
		return out, err
	}
	return out, nil
}

func orDefault[T any](v []T, def T) []T {
	if v == nil {
		return []T{def}
	}
	return slices.Clone(v)
}

func distinct[T comparable](name string, v []T) error {
	if len(v) == 0 {
		return fmt.Errorf("%w: empty %s list", ErrConfig, name)
	}
	seen := map[T]bool{}
	for _, x := range v {
		if seen[x] {
			return fmt.Errorf("%w: repeated %s %v in %v", ErrConfig, name, x, v)
		}
		seen[x] = true
	}
	return nil
}

// varying returns the knobs with more than one value, in knobNames order.
func (k Knobs) varying() []string {
	lens := map[string]int{KnobL1Ratio: len(k.L1Ratios), KnobClip: len(k.Clips), KnobDropout: len(k.Dropouts),
		KnobBatch: len(k.Batches), KnobPasses: len(k.Passes), KnobAverage: len(k.Averages)}
	var out []string
	for _, n := range knobNames {
		if lens[n] > 1 {
			out = append(out, n)
		}
	}
	return out
}

// Families returns the families of the frontier of these knobs: lambda,
// then one per knob with more than one value (lambda and that knob tuned,
// the others at their baselines), then all when two or more knobs vary.
func (k Knobs) Families() []string {
	v := k.varying()
	out := append([]string{FamilyLambda}, v...)
	if len(v) > 1 {
		out = append(out, FamilyAll)
	}
	return out
}

// Setting is one point of the grid: lambda and a value of every knob.
type Setting struct {
	Lambda  float64 `json:"lambda"`
	L1Ratio float64 `json:"l1_ratio"`
	Clip    float64 `json:"clip"`
	Dropout float64 `json:"dropout"`
	Batch   int     `json:"batch"`
	Passes  int     `json:"passes"`
	Average bool    `json:"average"`
	// Varied lists the knobs (not lambda) away from their baselines,
	// joined by "+"; empty for the lambda family.
	Varied string `json:"varied"`
}

// String describes the setting compactly.
func (s Setting) String() string {
	parts := []string{"lambda=" + fmtG(s.Lambda), "l1=" + fmtG(s.L1Ratio)}
	if s.Clip > 0 {
		parts = append(parts, "G="+fmtG(s.Clip))
	}
	if s.Dropout != 1 {
		parts = append(parts, "s="+fmtG(s.Dropout))
	}
	if s.Batch > 1 {
		parts = append(parts, "b="+strconv.Itoa(s.Batch))
	}
	if s.Passes == 0 {
		parts = append(parts, "exact") // a training-time mechanism: minimized exactly
	} else {
		parts = append(parts, "k="+strconv.Itoa(s.Passes))
	}
	if s.Average {
		parts = append(parts, "avg")
	}
	return strings.Join(parts, " ")
}

// InFamily reports whether the setting belongs to the family: every knob
// but the family's at its baseline (lambda: all at their baselines; all:
// any setting).
func (s Setting) InFamily(family string) bool {
	switch family {
	case FamilyAll:
		return true
	case FamilyLambda:
		return s.Varied == ""
	}
	return s.Varied == "" || s.Varied == family
}

// settings returns the grid: every lambda with every combination of the
// knobs' values, lambda varying fastest.
func (k Knobs) settings(lambdas []float64) []Setting {
	var out []Setting
	for ai, a := range k.L1Ratios {
		for ci, c := range k.Clips {
			for di, d := range k.Dropouts {
				for bi, b := range k.Batches {
					for pi, p := range k.Passes {
						for vi, v := range k.Averages {
							var varied []string
							for i, n := range []int{ai, ci, di, bi, pi, vi} {
								if n > 0 {
									varied = append(varied, knobNames[i])
								}
							}
							for _, l := range lambdas {
								out = append(out, Setting{Lambda: l, L1Ratio: a, Clip: c, Dropout: d, Batch: b, Passes: p, Average: v,
									Varied: strings.Join(varied, "+")})
							}
						}
					}
				}
			}
		}
	}
	return out
}

// config returns the trainer settings of s: bounded inverse-t steps, for
// which the strongly convex SGD route certifies every knob.
func (s Setting) config(p *protocol.Protocol, seed uint64) trainer.Config {
	return trainer.Config{
		Loss:     p.Loss(),
		Classes:  p.Classes(),
		Reg:      regularizers.ElasticNet{Lambda: s.Lambda, L1Ratio: s.L1Ratio},
		Kappa:    1,
		Schedule: trainer.BoundedInverseT,
		Passes:   s.Passes,
		Batch:    s.Batch,
		Clip:     s.Clip,
		Dropout:  s.Dropout,
		Average:  s.Average,
		Seed:     seed,
	}
}

// validationParts splits the training rows of a split by position
// (selection.ValidationSplit) into the part the candidates of the private
// selection are trained on and the validation part that scores them.
func validationParts(train *datasets.Dataset, frac float64, seed uint64) (fit, val *datasets.Dataset, err error) {
	n, _ := train.X.Dims()
	fi, vi, err := selection.ValidationSplit(n, frac, seed)
	if err != nil {
		return nil, nil, err
	}
	fit, val = rowsOf(train, fi), rowsOf(train, vi)
	note := fmt.Sprintf("private selection: %d validation rows held out of the %d training rows by position; candidates trained on the other %d", len(vi), n, len(fi))
	fit.Notes = append(slices.Clone(train.Notes), note)
	return fit, val, nil
}

// rowsOf returns the rows idx of ds.
func rowsOf(ds *datasets.Dataset, idx []int) *datasets.Dataset {
	_, d := ds.X.Dims()
	X := mat.NewDense(len(idx), d, nil)
	y := make([]float64, len(idx))
	for r, i := range idx {
		X.SetRow(r, ds.X.RawRowView(i))
		y[r] = ds.Y[i]
	}
	return ds.WithData(X, y)
}
