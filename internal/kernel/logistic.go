package kernel

import "math"

// LogisticParts sets, for every row i < len(z) of margins z and labels y,
// the parts of the logistic loss that objpert's solver reads, as
// losses.Logistic's Parts1 defines them and with its bits for the labels
// -1 and +1: with m = (-y)*z and e = math.Exp(-|m|) (math.Exp's bits),
// q = 1 + e, plus = m if m >= 0 and 0 otherwise, d1 = (-y)*(1/q) if m >= 0
// and (-y)*(e/q) otherwise, s = e/q if z < 0 and 1/q otherwise, and
// d2 = s*(1 - s). y and the outputs need len(z) elements (it panics
// otherwise).
//
// An assembly kernel takes four rows at a time where the processor has AVX,
// AVX2 and FMA, and math.Exp its fused multiply-add path: it repeats
// math.Exp's steps, which it follows for |m| < logisticRange. LogisticParts
// computes the other rows (and NaN) again with the Go twin.
func LogisticParts(z, y, plus, e, d1, d2 []float64) {
	n := len(z)
	y, plus, e, d1, d2 = prefix(y, n), prefix(plus, n), prefix(e, n), prefix(d1, n), prefix(d2, n)
	r := 0
	if hasLogisticKernel && n >= 4 {
		r = n &^ 3
		if logisticParts4(&z[0], &y[0], &plus[0], &e[0], &d1[0], &d2[0], r/4) != 0 {
			for i, zi := range z[:r] {
				if !(math.Abs(-y[i]*zi) < logisticRange) {
					plus[i], e[i], d1[i], d2[i] = logisticRow(zi, y[i])
				}
			}
		}
	}
	for i := r; i < n; i++ {
		plus[i], e[i], d1[i], d2[i] = logisticRow(z[i], y[i])
	}
}

// logisticRange bounds the |m| for which logisticParts4 gives math.Exp's
// bits: there math.Exp's exponent k = round(-|m| log2(e)) is at least
// -1021, and 2^k, by which it scales its result last, a normal number.
const logisticRange = 708
