package modelfile

import (
	"math"

	"gonum.org/v1/gonum/floats"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/stump"
)

// ConstantClass returns the class that r's model predicts for every row
// its feature map can produce, and true, when there is one: the model is
// then useless, whatever the rows. It reads the released weights and the
// map alone (post-processing, at no privacy cost). Every map but the
// stump's ends in x' = [u, 1]/sqrt(2) with ||u|| <= 1, so a binary model
// w = [v, b] predicts one class over the whole ball when |b| > ||v||, and
// a multiclass model predicts class k everywhere when b_k - b_l >
// ||v_k - v_l|| for every other class l (the margin differences are
// linear in u). The ball may hold more than the rows can reach, so a
// model constant over the rows can be missed; one found here is constant
// over every row. A stump (the map [z, 1]) is constant when its feature's
// two ends give one class: z_j in {0, 1} for a one-hot indicator, whose
// threshold may lie at or below 0, and [-1, 1] for a numeric feature. False
// for regression and a model without a bias input.
func (r *Released) ConstantClass() (string, bool) {
	m, p := r.Model, r.Preprocessing
	if m == nil || p == nil || m.D < 2 || m.Task == losses.Regression || len(r.Schema.Classes) < 2 {
		return "", false
	}
	if p.Stump {
		return r.constantStump()
	}
	d := m.D - 1 // the bias is the last input
	if m.K == 1 {
		v, b := m.W[:d], m.W[d]
		if !(math.Abs(b) > floats.Norm(v, 2)) {
			return "", false
		}
		if b > 0 {
			return r.Schema.Classes[1], true
		}
		return r.Schema.Classes[0], true
	}
	if m.K != len(r.Schema.Classes) {
		return "", false
	}
	diff := make([]float64, d)
	for k := range m.K {
		wk := m.W[k*m.D : (k+1)*m.D]
		wins := true
		for l := range m.K {
			if l == k {
				continue
			}
			wl := m.W[l*m.D : (l+1)*m.D]
			floats.SubTo(diff, wk[:d], wl[:d])
			if !(wk[d]-wl[d] > floats.Norm(diff, 2)) {
				wins = false
				break
			}
		}
		if wins {
			return r.Schema.Classes[k], true
		}
	}
	return "", false
}

// constantStump is ConstantClass for a stump: the class at both ends of
// its feature's range, when they agree (for a multiclass stump, K
// outputs, the argmax's class at each end).
func (r *Released) constantStump() (string, bool) {
	var feature int
	var predict func(z []float64) int // the class index
	if K := r.Model.K; K > 1 {
		if K != len(r.Schema.Classes) {
			return "", false
		}
		if m, err := stump.MultiFromWeights(r.Model.W, K, stump.MultiGrid); err == nil {
			feature, predict = m.Feature, func(z []float64) int { return m.Predict(z, stump.MultiGrid) }
		} else if v, err := stump.IntervalFromWeights(r.Model.W, K, stump.MultiGrid); err == nil {
			// An interval (three classes along a feature) is constant on
			// an indicator whose two values fall in one interval.
			feature, predict = v.Feature, func(z []float64) int { return v.Predict(z, stump.MultiGrid) }
		} else {
			return "", false
		}
	} else {
		st, err := stump.FromWeights(r.Model.W, stump.DefaultGrid)
		if err != nil {
			return "", false
		}
		feature, predict = st.Feature, func(z []float64) int { return int(st.Predict(z, stump.DefaultGrid)+1) / 2 }
	}
	lo, hi := -1.0, 1.0
	if r.Preprocessing.Indicator(feature) {
		lo = 0
	}
	z := make([]float64, r.Model.D-1)
	z[feature] = lo
	a := predict(z)
	z[feature] = hi
	if predict(z) != a {
		return "", false
	}
	return r.Schema.Classes[a], true
}
