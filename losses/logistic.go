package losses

import (
	"fmt"
	"math"
)

// Logistic is the binary logistic loss l(z, y) = log(1 + exp(-y z)) for
// labels y in {-1, +1}. It is convex with L_z = 1 and S_z = 1/4 everywhere.
type Logistic struct{}

// Name returns "logistic".
func (Logistic) Name() string { return "logistic" }

// Task returns Binary.
func (Logistic) Task() Task { return Binary }

// Outputs returns 1.
func (Logistic) Outputs(int) int { return 1 }

// CheckLabel accepts -1 and +1.
func (Logistic) CheckLabel(y float64, _ int) error { return checkSign(y) }

// Value1 returns log(1 + exp(-y z)), computed without overflow.
func (Logistic) Value1(z, y float64) float64 {
	m := -y * z
	if m > 0 {
		return m + math.Log1p(math.Exp(-m))
	}
	return math.Log1p(math.Exp(m))
}

// Deriv returns dl/dz = -y sigma(-y z).
func (Logistic) Deriv(z, y float64) float64 { return -y * sigmoid(-y*z) }

// Deriv2 returns d2l/dz2 = sigma(z) sigma(-z) (y^2 = 1).
func (Logistic) Deriv2(z, _ float64) float64 {
	s := sigmoid(z)
	return s * (1 - s)
}

// Value returns l(z[0], y). It panics if len(z) != 1.
func (l Logistic) Value(z []float64, y float64) float64 { return scalarValue(l, z, y) }

// Grad writes dl/dz into dst and returns l(z, y), the same values as Deriv
// and Value1 from one exponential.
func (Logistic) Grad(dst, z []float64, y float64) float64 {
	if len(z) != 1 || len(dst) != 1 {
		panic("losses: scalar loss with K != 1")
	}
	m := -y * z[0]
	e := math.Exp(-math.Abs(m))
	if m >= 0 {
		dst[0] = -y / (1 + e)
		return m + math.Log1p(e)
	}
	dst[0] = -y * e / (1 + e)
	return math.Log1p(e)
}

// Parts1 returns, from one exponential, the two parts of Value1 at (z, y)
// (Value1 = plus + log1p(e), with m = -y z, plus = max(m, 0) and e =
// exp(-|m|), added in that order), and Deriv and Deriv2, with their bits,
// for the labels the loss accepts (y = -1 or +1; it reads |z| as |y z|):
// the LogisticParts capability. Package glm takes them in one pass over
// the rows and sums the logarithms of many rows at once.
func (Logistic) Parts1(z, y float64) (plus, e, d1, d2 float64) {
	m := -y * z
	e = math.Exp(-math.Abs(m)) // exp(-|z|)
	// sigmoid(z) as sigmoid computes it, from the same exponential
	s := 1 / (1 + e)
	if z < 0 {
		s = e / (1 + e)
	}
	d2 = s * (1 - s)
	if m >= 0 {
		return m, e, -y / (1 + e), d2
	}
	return 0, e, -y * e / (1 + e), d2
}

// Hess writes d2l/dz2 into dst.
func (l Logistic) Hess(dst, z []float64, y float64) { scalarHess(l, dst, z, y) }

// Constants returns L_z = 1, S_z = 1/4, convex, smooth and C^2 (l” =
// sigma(z) sigma(-z) is continuous), on any domain.
func (Logistic) Constants(Domain) (Constants, error) {
	return Constants{Lz: 1, Sz: 0.25, Convex: true, Smooth: true, C2: true, LipHess: true, Tz: 1 / (6 * math.Sqrt(3))}, nil
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// checkSign accepts exactly -1 and +1.
func checkSign(y float64) error {
	if y != 1 && y != -1 {
		return fmt.Errorf("%w: %v, want -1 or +1", ErrLabel, y)
	}
	return nil
}

// scalarValue, scalarGrad and scalarHess implement the vector methods of a
// K = 1 loss from its Margin methods. They are generic, not taking a Margin
// interface, so that a loss with parameters is not boxed (allocated) on
// every call.
func scalarValue[M Margin](m M, z []float64, y float64) float64 {
	if len(z) != 1 {
		panic("losses: scalar loss with K != 1")
	}
	return m.Value1(z[0], y)
}

func scalarGrad[M Margin](m M, dst, z []float64, y float64) float64 {
	if len(z) != 1 || len(dst) != 1 {
		panic("losses: scalar loss with K != 1")
	}
	dst[0] = m.Deriv(z[0], y)
	return m.Value1(z[0], y)
}

func scalarHess[M Margin](m M, dst, z []float64, y float64) {
	if len(z) != 1 || len(dst) != 1 {
		panic("losses: scalar loss with K != 1")
	}
	dst[0] = m.Deriv2(z[0], y)
}
