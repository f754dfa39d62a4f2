package losses

import (
	"fmt"
	"math"

	"gorgonia.org/gorgonia"
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

// Hess writes d2l/dz2 into dst.
func (l Logistic) Hess(dst, z []float64, y float64) { scalarHess(l, dst, z, y) }

// Constants returns L_z = 1, S_z = 1/4, convex, on any domain.
func (Logistic) Constants(Domain) (Constants, error) {
	return Constants{Lz: 1, Sz: 0.25, Convex: true}, nil
}

// Expr builds softplus(-y z) (see softplus for why not Gorgonia's op).
func (l Logistic) Expr(z, y *gorgonia.Node) (*gorgonia.Node, error) {
	return buildExpr(l.Name(), func() (*gorgonia.Node, error) {
		g := gorgonia.Must
		return softplus(g(gorgonia.HadamardProd(g(gorgonia.Neg(y)), g(scalarInputs(z, y)))))
	})
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

// scalarInputs checks the nodes of a K = 1 loss, a margin of shape (1) or ()
// and a scalar label, and returns the margin as a scalar node.
func scalarInputs(z, y *gorgonia.Node) (*gorgonia.Node, error) {
	if !y.IsScalar() {
		return nil, fmt.Errorf("label node of shape %v, want a scalar", y.Shape())
	}
	if z.IsScalar() {
		return z, nil
	}
	if z.Dims() != 1 || z.Shape()[0] != 1 {
		return nil, fmt.Errorf("margin node of shape %v, want (1)", z.Shape())
	}
	return gorgonia.Sum(z)
}

// softplus returns log(1 + exp(m)) as R + log1p(exp(m - 2R)), R = (m)_+.
// Gorgonia's Softplus op is not used: in v0.9.18 it returns m for m > 16 and
// its derivative (the Sigmoid op) returns 1 for m > 19, errors up to 1e-7
// and 6e-9. Here the exponent m - 2R = -|m| is never positive, so value and
// derivative are accurate, and the derivative is sigma(m) also at m = 0
// whichever one-sided derivative Rectify takes there: it is
// R' + sigma(-|m|)(1 - 2R'), which is 1/2 for R' = 0 and for R' = 1.
func softplus(m *gorgonia.Node) (*gorgonia.Node, error) {
	g := gorgonia.Must
	r := g(gorgonia.Rectify(m))
	u := g(gorgonia.Sub(m, g(gorgonia.Mul(r, constant(2)))))
	return gorgonia.Add(r, g(gorgonia.Log1p(g(gorgonia.Exp(u)))))
}
