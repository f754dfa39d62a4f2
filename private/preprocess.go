package private

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets/preprocess"
)

// Preprocess selects how raw feature values become model inputs.
type Preprocess string

const (
	// Bounds clamps every feature to its declared bound [lo, hi] and maps
	// it affinely onto [-1, 1]: z = (2 clamp(x) - lo - hi) / (hi - lo). A
	// per-row map with public constants: inside the guarantee.
	Bounds Preprocess = "bounds"
	// None uses the features as they are, for data already on a common,
	// public scale: inside the guarantee.
	None Preprocess = "none"
	// Standardize maps z = (x - mean) / scale with the means and scales
	// fitted on the training split. The statistics move every row when one
	// row changes: outside the guarantee, which the certificate states.
	Standardize Preprocess = "standardize"
)

// inside reports whether the map is inside the guarantee.
func (p Preprocess) inside() bool { return p == Bounds || p == None }

func (p Preprocess) validate() error {
	switch p {
	case Bounds, None, Standardize:
		return nil
	}
	return fmt.Errorf("%w: preprocessing %q, want bounds, none or standardize", ErrOptions, string(p))
}

// Preprocessing is the public map from a raw row (the feature columns in
// Features order) to a model input, written into the model file:
//
//	z  = the mode's per-feature map (Bounds, None, Standardize)
//	x' = [clip_1(z), 1] / sqrt(2)
//
// clip_1 scales a row of norm above 1 to norm 1, so ||x'|| <= 1 and the
// row bound kappa = 1 holds with the constant bias feature counted in it
// (docs/DESIGN.md, section 2). A null row (a label outside the declared classes) maps to
// the zero vector, bias included: its loss gradient is zero at every w.
type Preprocessing struct {
	Mode Preprocess `json:"mode"`
	// Features names the raw feature columns, in model-input order; the
	// model's last input is the bias.
	Features []string `json:"features"`
	// Lo and Hi are the declared bounds (Bounds mode).
	Lo []float64 `json:"lo,omitempty"`
	Hi []float64 `json:"hi,omitempty"`
	// Mean and Scale are the fitted statistics (Standardize mode): not
	// private.
	Mean  []float64 `json:"mean,omitempty"`
	Scale []float64 `json:"scale,omitempty"`
	// Map states the map in words.
	Map string `json:"map"`
}

// newPreprocessing builds the map of mode for the features; trainRows (n x
// d raw values) is read only by Standardize.
func newPreprocessing(mode Preprocess, features []string, s Schema, trainRows *mat.Dense) (*Preprocessing, error) {
	p := &Preprocessing{Mode: mode, Features: append([]string(nil), features...), Map: preprocessingMap(mode)}
	switch mode {
	case Bounds:
		var missing []string
		for _, f := range features {
			b, ok := s.bound(f)
			if !ok {
				missing = append(missing, f)
				continue
			}
			p.Lo, p.Hi = append(p.Lo, b.Lo), append(p.Hi, b.Hi)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%w: no bound declared for feature column(s) %q: every feature needs column,lo,hi", ErrSchema, missing)
		}
		for _, b := range s.Bounds {
			if !contains(features, b.Column) {
				return nil, fmt.Errorf("%w: a bound names column %q, which is not a feature column", ErrSchema, b.Column)
			}
		}
	case None:
	case Standardize:
		std, err := preprocess.FitStandardizer(trainRows)
		if err != nil {
			return nil, err
		}
		p.Mean, p.Scale = std.Mean, std.Scale
	default:
		return nil, mode.validate()
	}
	return p, nil
}

// preprocessingMap states the map of mode in words.
func preprocessingMap(mode Preprocess) string {
	const rowMap = "x' = [clip_1(z), 1] / sqrt(2), clip_1 scaling a row of norm above 1 to norm 1, so ||x'|| <= 1; a row whose label is not declared maps to 0"
	switch mode {
	case Bounds:
		return "z_j = (2 clamp(x_j, lo_j, hi_j) - lo_j - hi_j) / (hi_j - lo_j) with the declared bounds; " + rowMap
	case Standardize:
		return "z_j = (x_j - mean_j) / scale_j with statistics fitted on the training split (not private); " + rowMap
	}
	return "z = x; " + rowMap
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Dim returns the number of model inputs: the features and the bias.
func (p *Preprocessing) Dim() int { return len(p.Features) + 1 }

// Apply writes the model input of the raw row x (len(p.Features) values)
// into dst (p.Dim() values). Errors wrap ErrData: a length mismatch or a
// value that is not finite.
func (p *Preprocessing) Apply(dst, x []float64) error {
	d := len(p.Features)
	if len(x) != d || len(dst) != d+1 {
		return fmt.Errorf("%w: a row of %d values into %d inputs, the model has %d features and a bias", ErrData, len(x), len(dst), d)
	}
	z := dst[:d]
	for j, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: feature %q is %v", ErrData, p.Features[j], v)
		}
		switch p.Mode {
		case Bounds:
			lo, hi := p.Lo[j], p.Hi[j]
			v = math.Max(lo, math.Min(hi, v))
			// lo/2 and hi/2 keep the sum finite near the float64 range.
			v = (v - (lo/2 + hi/2)) / (hi/2 - lo/2)
			z[j] = math.Max(-1, math.Min(1, v))
		case Standardize:
			z[j] = (v - p.Mean[j]) / p.Scale[j]
		default:
			z[j] = v
		}
	}
	return preprocess.UnitBallRow(dst, z)
}

// check validates a map read from a model file.
func (p *Preprocessing) check() error {
	if err := p.Mode.validate(); err != nil {
		return err
	}
	d := len(p.Features)
	if d == 0 {
		return fmt.Errorf("%w: preprocessing without features", ErrModelFile)
	}
	finite := func(vs []float64) bool {
		for _, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
		return true
	}
	switch p.Mode {
	case Bounds:
		if len(p.Lo) != d || len(p.Hi) != d || !finite(p.Lo) || !finite(p.Hi) {
			return fmt.Errorf("%w: bounds of %d and %d values for %d features", ErrModelFile, len(p.Lo), len(p.Hi), d)
		}
		for j := range p.Lo {
			if !(p.Lo[j] < p.Hi[j]) {
				return fmt.Errorf("%w: feature %q bounds [%v, %v]", ErrModelFile, p.Features[j], p.Lo[j], p.Hi[j])
			}
		}
	case Standardize:
		if len(p.Mean) != d || len(p.Scale) != d || !finite(p.Mean) || !finite(p.Scale) {
			return fmt.Errorf("%w: standardizer of %d and %d values for %d features", ErrModelFile, len(p.Mean), len(p.Scale), d)
		}
		for j, s := range p.Scale {
			if !(s > 0) {
				return fmt.Errorf("%w: feature %q scale %v", ErrModelFile, p.Features[j], s)
			}
		}
	}
	return nil
}
