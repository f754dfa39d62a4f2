package graph

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/losses"
)

// exprEval evaluates a loss's Gorgonia expression and its gradient in the
// margins, on one graph and tape machine reused for every point.
type exprEval struct {
	loss       losses.Loss
	k          int
	z, y, out  *gorgonia.Node
	grad       *gorgonia.Node
	vm         gorgonia.VM
	gradBuffer []float64
}

func newExprEval(t *testing.T, l losses.Loss, k int) *exprEval {
	t.Helper()
	g := gorgonia.NewGraph()
	z := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(k), gorgonia.WithName("z"))
	var y *gorgonia.Node
	if l.Task() == losses.Multiclass {
		y = gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(k), gorgonia.WithName("y"))
	} else {
		y = gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("y"))
	}
	out, err := Expr(l, z, y)
	if err != nil {
		t.Fatalf("%s: Expr: %v", l.Name(), err)
	}
	grads, err := gorgonia.Grad(out, z)
	if err != nil {
		t.Fatalf("%s: Grad: %v", l.Name(), err)
	}
	e := &exprEval{loss: l, k: k, z: z, y: y, out: out, grad: grads[0], gradBuffer: make([]float64, k)}
	e.vm = gorgonia.NewTapeMachine(g)
	t.Cleanup(func() { e.vm.Close() })
	return e
}

// eval returns the expression's value and gradient at (z, y); y is the class
// index for multiclass losses and is one-hot encoded here.
func (e *exprEval) eval(t *testing.T, z []float64, y float64) (float64, []float64) {
	t.Helper()
	zz := append([]float64(nil), z...)
	if err := gorgonia.Let(e.z, tensor.New(tensor.WithShape(e.k), tensor.WithBacking(zz))); err != nil {
		t.Fatal(err)
	}
	if e.loss.Task() == losses.Multiclass {
		oh := make([]float64, e.k)
		oh[int(y)] = 1
		if err := gorgonia.Let(e.y, tensor.New(tensor.WithShape(e.k), tensor.WithBacking(oh))); err != nil {
			t.Fatal(err)
		}
	} else if err := gorgonia.Let(e.y, y); err != nil {
		t.Fatal(err)
	}
	defer e.vm.Reset()
	if err := e.vm.RunAll(); err != nil {
		t.Fatalf("%s: RunAll: %v", e.loss.Name(), err)
	}
	v, ok := e.out.Value().Data().(float64)
	if !ok {
		t.Fatalf("%s: loss value of type %T, want float64", e.loss.Name(), e.out.Value().Data())
	}
	switch d := e.grad.Value().Data().(type) {
	case []float64:
		copy(e.gradBuffer, d)
	case float64:
		e.gradBuffer[0] = d
	default:
		t.Fatalf("%s: gradient of type %T", e.loss.Name(), d)
	}
	return v, append([]float64(nil), e.gradBuffer...)
}

// exprPoints returns (z, y) points for a loss: random ones and the kinks
// and extremes where a composed expression could take a wrong one-sided
// derivative (z = 0, m = 1 -+ h, r = -+delta, tied softmax margins).
func exprPoints(l losses.Loss, k int) [][]float64 {
	var pts [][]float64 // z..., y
	switch l.Task() {
	case losses.Multiclass:
		r := rand.New(rand.NewPCG(4, 0xe4))
		pts = append(pts, append(make([]float64, k), 0), append(make([]float64, k), float64(k-1)))
		big := make([]float64, k+1)
		big[0], big[1] = 700, -700
		pts = append(pts, big)
		for i := 0; i < 200; i++ {
			p := make([]float64, k+1)
			scale := []float64{1e-2, 1, 10, 300}[r.IntN(4)]
			for j := 0; j < k; j++ {
				p[j] = scale * r.NormFloat64()
			}
			p[k] = float64(r.IntN(k))
			pts = append(pts, p)
		}
	default:
		pts = append(pts, scalarSpecial(l)...)
		r := rand.New(rand.NewPCG(5, 0x1055))
		for i := 0; i < 200; i++ {
			y := float64(2*r.IntN(2) - 1)
			if l.Task() == losses.Regression {
				y = 3 * r.NormFloat64()
			}
			z := []float64{1e-3, 1, 3, 30, 1e3}[r.IntN(5)] * r.NormFloat64()
			if _, ok := l.(losses.Squared); ok {
				z, y = 3*(2*r.Float64()-1), 4*(2*r.Float64()-1)
			}
			pts = append(pts, []float64{z, y})
		}
		for _, y := range []float64{-1, 1} {
			pts = append(pts, []float64{0, y})
		}
	}
	return pts
}

// TestExprMatchesGrad checks that the Gorgonia expression of every loss
// has the value of Value and the gradient of Grad, to 1e-10, at random
// points and at the kinks.
func TestExprMatchesGrad(t *testing.T) {
	for _, l := range append(losses.All(), losses.HuberHinge{H: 0.05}, losses.Huber{Delta: 0.3}) {
		for _, k := range []int{2, 3, 7} {
			if l.Task() != losses.Multiclass && k > 2 {
				continue
			}
			k := l.Outputs(k)
			t.Run(fmt.Sprintf("%s/%v/K=%d", l.Name(), l, k), func(t *testing.T) {
				e := newExprEval(t, l, k)
				want := make([]float64, k)
				n := 0
				for _, p := range exprPoints(l, k) {
					z, y := p[:k], p[k]
					if l.Task() == losses.Multiclass && l.CheckLabel(y, k) != nil {
						continue
					}
					v, g := e.eval(t, z, y)
					wv := l.Grad(want, z, y)
					if !near(v, wv, 1e-10) {
						t.Errorf("Expr value %v, Value %v at z = %v, y = %v", v, wv, z, y)
					}
					for j := range g {
						if !near(g[j], want[j], 1e-10) {
							t.Errorf("Expr gradient %v, Grad %v at z = %v, y = %v", g, want, z, y)
							break
						}
					}
					n++
				}
				if n < 200 {
					t.Errorf("only %d points checked", n)
				}
			})
		}
	}
}

// TestExprErrors checks that bad parameters and bad node shapes give
// errors, not panics.
func TestExprErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	vec := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("z"))
	sc := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("y"))
	z1 := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(1), gorgonia.WithName("z1"))
	y2 := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("y2"))
	cases := []struct {
		name string
		loss losses.Loss
		z, y *gorgonia.Node
		want error
	}{
		{"huber-hinge zero h", losses.HuberHinge{}, z1, sc, losses.ErrParam},
		{"huber NaN delta", losses.Huber{Delta: math.NaN()}, z1, sc, losses.ErrParam},
		{"softmax scalar label", losses.Softmax{}, vec, sc, ErrExpr},
		{"softmax scalar margin", losses.Softmax{}, sc, vec, ErrExpr},
		{"huber vector label", losses.Huber{Delta: 1}, z1, vec, ErrExpr},
		{"logistic 3 margins", losses.Logistic{}, vec, sc, ErrExpr},
		{"softmax label of the wrong length", losses.Softmax{}, vec, y2, ErrExpr}, // a Gorgonia panic, recovered
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := Expr(c.loss, c.z, c.y)
			if !errors.Is(err, c.want) || !errors.Is(err, ErrExpr) || n != nil {
				t.Errorf("Expr = %v, %v; want an error wrapping %v and ErrExpr", n, err, c.want)
			}
		})
	}
}

// scalarSpecial returns the kinks and extremes of a K = 1 loss as (z, y)
// points: m = y z at 1 -+ h for the smoothed hinge, residuals at -+delta for
// Huber, large margins for the logistic loss.
func scalarSpecial(l losses.Loss) [][]float64 {
	var pts [][]float64
	switch l := l.(type) {
	case losses.Logistic:
		for _, p := range [][2]float64{{0, 1}, {0, -1}, {-40, 1}, {40, -1}, {1e3, 1}, {-1e3, 1}, {40, 1}} {
			pts = append(pts, []float64{p[0], p[1]})
		}
	case losses.HuberHinge:
		h := l.H
		for _, y := range []float64{-1, 1} {
			for _, m := range []float64{1 - h, 1 + h, 1, 0, 1 - h/2, -1e3, 1e3, -40} {
				pts = append(pts, []float64{m * y, y})
			}
		}
	case losses.Huber:
		for _, y := range []float64{0, 1.5, -7} {
			for _, r := range []float64{l.Delta, -l.Delta, 0, 1e3, -1e3, l.Delta / 2} {
				pts = append(pts, []float64{y + r, y})
			}
		}
	case losses.Squared:
		pts = append(pts, []float64{3, -4}, []float64{-3, 4}, []float64{0, 0}, []float64{1, 1})
	}
	return pts
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol*(1+math.Abs(want)) }

// userLoss is a user loss with an expression: the logistic loss under
// another type, so Expr takes it through Expresser.
type userLoss struct{ losses.Logistic }

func (userLoss) Expr(z, y *gorgonia.Node) (*gorgonia.Node, error) { return logisticExpr(z, y) }

// bareLoss is a user loss without an expression.
type bareLoss struct{ losses.Logistic }

func TestExprOptionalInterface(t *testing.T) {
	g := gorgonia.NewGraph()
	z := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(1), gorgonia.WithName("z"))
	y := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("y"))
	if n, err := Expr(userLoss{}, z, y); err != nil || n == nil {
		t.Errorf("a loss implementing Expresser: %v, %v", n, err)
	}
	if n, err := Expr(bareLoss{}, z, y); !errors.Is(err, ErrExpr) || n != nil {
		t.Errorf("a loss without an expression: %v, %v; want an error wrapping ErrExpr", n, err)
	}
	if _, err := Expr(nil, z, y); !errors.Is(err, ErrExpr) {
		t.Errorf("nil loss: %v", err)
	}
}
