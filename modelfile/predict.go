package modelfile

import (
	"fmt"
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
// order) for the raw row x, for a loss whose margins are log-odds
// (losses.Probabilistic: logistic and softmax). Other losses give an error
// wrapping ErrFile.
func (r *Released) PredictProba(x []float64) ([]float64, error) {
	loss, err := losses.ByName(r.Model.Loss)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFile, err)
	}
	pl, ok := loss.(losses.Probabilistic)
	if !ok {
		return nil, fmt.Errorf("%w: the %s loss gives no class probabilities", ErrFile, r.Model.Loss)
	}
	z, err := r.Margins(x)
	if err != nil {
		return nil, err
	}
	p := make([]float64, max(len(z), 2))
	pl.Proba(p, z)
	return p, nil
}
