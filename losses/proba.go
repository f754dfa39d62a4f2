package losses

import "math"

// Probabilistic is implemented by the losses whose margins are log-odds (a
// negative log-likelihood): Proba writes the probability of each class, in
// class order, for the margins z. Logistic gives two (the class encoded -1,
// then +1), Softmax one per class.
type Probabilistic interface {
	Proba(dst, z []float64)
}

// Proba writes [1 - p, p], p = 1/(1 + exp(-z[0])), into dst (two values).
func (Logistic) Proba(dst, z []float64) {
	p := 1 / (1 + math.Exp(-z[0]))
	dst[0], dst[1] = 1-p, p
}

// Proba writes the softmax of z into dst (len(z) values), computed from
// z - max(z) so that no exponential overflows.
func (Softmax) Proba(dst, z []float64) {
	m := z[0]
	for _, v := range z {
		m = math.Max(m, v)
	}
	var s float64
	for k, v := range z {
		dst[k] = math.Exp(v - m)
		s += dst[k]
	}
	for k := range dst[:len(z)] {
		dst[k] /= s
	}
}
