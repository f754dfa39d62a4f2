package modelfile

import (
	"fmt"
	"math"
	"strconv"

	"github.com/stabpriv/stabpriv/losses"
)

// Features returns the raw feature columns a row must give, in order.
func (r *Released) Features() []string { return append([]string(nil), r.Preprocessing.Features...) }

// Margins returns the K margins W x' of the raw row x (the feature columns
// in Features order) after the bundled preprocessing. Errors wrap datasets.ErrFormat:
// a row of the wrong length or with a value that is not finite.
func (r *Released) Margins(x []float64) ([]float64, error) {
	in := make([]float64, r.Preprocessing.Dim())
	if err := r.Preprocessing.Apply(in, x); err != nil {
		return nil, err
	}
	z := make([]float64, r.Model.K)
	r.Model.Margins(z, in)
	return z, nil
}

// Predict returns the prediction for the raw row x: the class name for
// classification, the value (formatted with strconv 'g') for regression.
func (r *Released) Predict(x []float64) (string, error) {
	z, err := r.Margins(x)
	if err != nil {
		return "", err
	}
	switch r.Model.Task {
	case losses.Binary:
		if z[0] >= 0 {
			return r.Schema.Classes[1], nil
		}
		return r.Schema.Classes[0], nil
	case losses.Multiclass:
		best := 0
		for k, v := range z {
			if v > z[best] {
				best = k
			}
		}
		return r.Schema.Classes[best], nil
	}
	return strconv.FormatFloat(z[0], 'g', -1, 64), nil
}

// PredictProba returns the probability of each class (in Schema.Classes
// order) for the raw row x, for the logistic and softmax losses, whose
// margins are log-odds. Other losses give an error wrapping ErrFile.
func (r *Released) PredictProba(x []float64) ([]float64, error) {
	if r.Model.Loss != (losses.Logistic{}).Name() && r.Model.Loss != (losses.Softmax{}).Name() {
		return nil, fmt.Errorf("%w: the %s loss gives no class probabilities", ErrFile, r.Model.Loss)
	}
	z, err := r.Margins(x)
	if err != nil {
		return nil, err
	}
	if len(z) == 1 {
		p := 1 / (1 + math.Exp(-z[0]))
		return []float64{1 - p, p}, nil
	}
	m := z[0]
	for _, v := range z {
		m = math.Max(m, v)
	}
	var s float64
	p := make([]float64, len(z))
	for k, v := range z {
		p[k] = math.Exp(v - m)
		s += p[k]
	}
	for k := range p {
		p[k] /= s
	}
	return p, nil
}
