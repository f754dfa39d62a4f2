package graph

import (
	"fmt"
	"math"
	"sync"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
)

// dotOp is the operation of gorgonia.Mul on two vectors, their inner
// product: the operation of the margin node of a linear model.
var dotOp = sync.OnceValue(func() gorgonia.Op {
	graphBuild.Lock()
	defer graphBuild.Unlock()
	g := gorgonia.NewGraph()
	a := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("a"))
	b := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("b"))
	return gorgonia.Must(gorgonia.Mul(a, b)).Op()
})

// checkGLM returns nil when m is a linear model in its one parameter node
// w with the margin node z = <x, w> (gorgonia.Mul of the input x and w, in
// either order), and the loss reaches x and w only through z; otherwise an
// error wrapping ErrNoBound that says why not. m must be valid (validate).
func checkGLM(m *Model, z *gorgonia.Node) error {
	if z == nil {
		return fmt.Errorf("%w: no Margin node, so the graph is not known to be a linear model", ErrNoBound)
	}
	if len(m.Params) != 1 {
		return fmt.Errorf("%w: %d parameter nodes; a linear model has one weight vector", ErrNoBound, len(m.Params))
	}
	w, x := m.Params[0], m.Input
	if z.Graph() != m.Graph || z.Op() != dotOp() {
		return fmt.Errorf("%w: the Margin node is not gorgonia.Mul(input, weights) of two vectors", ErrNoBound)
	}
	var kids []*gorgonia.Node
	for it := m.Graph.From(z.ID()); it.Next(); {
		kids = append(kids, it.Node().(*gorgonia.Node))
	}
	if len(kids) != 2 || !(kids[0] == x && kids[1] == w || kids[0] == w && kids[1] == x) {
		return fmt.Errorf("%w: the Margin node is not the product of input %s and weights %s", ErrNoBound, x.Name(), w.Name())
	}
	// The loss's ancestors, not looking behind z.
	seen := map[*gorgonia.Node]bool{}
	stack := []*gorgonia.Node{m.Loss}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[n] || n == z {
			continue
		}
		seen[n] = true
		if n == x || n == w {
			return fmt.Errorf("%w: the loss uses %s other than through the Margin node", ErrNoBound, n.Name())
		}
		for it := m.Graph.From(n.ID()); it.Next(); {
			stack = append(stack, it.Node().(*gorgonia.Node))
		}
	}
	return nil
}

// glmLoss is the loss l(z, y) of a program's graph of a linear model: the
// operations from its margin node to its loss node, run by this package
// with the margin and the label set to given values, and the derivative in
// the margin by Gorgonia's symbolic differentiation (Backpropagate). It
// implements losses.Loss and losses.Margin with the constants the program
// declares (a K = 1 loss), for the trainer's native driver. Its second
// derivative is not computed: Deriv2 and Hess give NaN (the SGD run and
// output perturbation read l and l' only).
//
// The first failure of a run (an operation's error or panic) is kept and
// every later value is NaN; err returns it.
type glmLoss struct {
	name string
	task losses.Task
	cons losses.Constants

	mu   sync.Mutex
	run  *runner
	zn   *gorgonia.Node // the margin node, cut from its inputs
	loss *gorgonia.Node
	dz   *gorgonia.Node // dl/dz
	z, y *gorgonia.F64
	fail error

	limit  float64 // the watch of a run (watch): the margins' bound, 0: off
	breach error   // the first breach of the watch
}

var (
	_ losses.Loss   = (*glmLoss)(nil)
	_ losses.Margin = (*glmLoss)(nil)
)

// newGLMLoss returns the loss of the graph m with margin node z (checked by
// checkGLM). It binds the label node to a value of its own and adds dl/dz
// to the graph. Errors wrap ErrGraph.
func newGLMLoss(m *Model, z *gorgonia.Node, name string, task losses.Task, cons losses.Constants) (_ *glmLoss, err error) {
	graphBuild.Lock()
	defer graphBuild.Unlock()
	defer recoverGraph(&err)
	l := &glmLoss{name: name, task: task, cons: cons, zn: z, loss: m.Loss, z: gorgonia.NewF64(0), y: gorgonia.NewF64(0)}
	if err := gorgonia.Let(m.Label, l.y); err != nil {
		return nil, fmt.Errorf("%w: label node: %w", ErrGraph, err)
	}
	seed := gorgonia.NewScalar(m.Graph, tensor.Float64, gorgonia.WithName("dl"), gorgonia.WithValue(1.0))
	grads, err := gorgonia.Backpropagate(gorgonia.Nodes{m.Loss}, gorgonia.Nodes{seed}, gorgonia.Nodes{z})
	if err != nil {
		return nil, fmt.Errorf("%w: derivative of the loss in the Margin node: %w", ErrGraph, err)
	}
	l.dz = grads[0]
	if l.run, err = newCutRunner([]*gorgonia.Node{z}, m.Loss, l.dz); err != nil {
		return nil, err
	}
	return l, nil
}

// eval returns l(z, y) and l'(z, y), NaN after a failure.
func (l *glmLoss) eval(z, y float64) (v, d float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return math.NaN(), math.NaN()
	}
	v, d, err := l.evalLocked(z, y)
	if err != nil {
		l.fail = err
		return math.NaN(), math.NaN()
	}
	l.observe(z, y, d)
	return v, d
}

func (l *glmLoss) evalLocked(z, y float64) (v, d float64, err error) {
	defer recoverGraph(&err)
	*l.z, *l.y = gorgonia.F64(z), gorgonia.F64(y)
	l.run.set(l.zn, l.z)
	if err := l.run.run(); err != nil {
		return 0, 0, err
	}
	lv, err1 := floats(l.run.value(l.loss))
	dv, err2 := floats(l.run.value(l.dz))
	if err1 != nil || err2 != nil || len(lv) != 1 || len(dv) != 1 {
		return 0, 0, fmt.Errorf("%w: loss or derivative at z = %g is not a float64 scalar", ErrGraph, z)
	}
	return lv[0], dv[0], nil
}

// err returns the first failure of a run of the loss, nil for none.
func (l *glmLoss) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fail
}

// Name implements losses.Loss.
func (l *glmLoss) Name() string { return l.name }

// Task implements losses.Loss.
func (l *glmLoss) Task() losses.Task { return l.task }

// Outputs implements losses.Loss: one margin.
func (l *glmLoss) Outputs(int) int { return 1 }

// CheckLabel implements losses.Loss: -1 or +1 for a binary loss, a finite
// label for regression.
func (l *glmLoss) CheckLabel(y float64, _ int) error {
	if l.task == losses.Binary && y != 1 && y != -1 {
		return fmt.Errorf("%w: %v, want -1 or +1", losses.ErrLabel, y)
	}
	if !check.Finite(y) {
		return fmt.Errorf("%w: %v is not finite", losses.ErrLabel, y)
	}
	return nil
}

// Value implements losses.Loss.
func (l *glmLoss) Value(z []float64, y float64) float64 { return l.Value1(z[0], y) }

// Grad implements losses.Loss.
func (l *glmLoss) Grad(dst, z []float64, y float64) float64 {
	v, d := l.eval(z[0], y)
	dst[0] = d
	return v
}

// Hess implements losses.Loss: NaN, not computed.
func (l *glmLoss) Hess(dst, z []float64, y float64) { dst[0] = l.Deriv2(z[0], y) }

// Constants implements losses.Loss: the declared constants, on every domain.
func (l *glmLoss) Constants(losses.Domain) (losses.Constants, error) { return l.cons, nil }

// Value1 implements losses.Margin.
func (l *glmLoss) Value1(z, y float64) float64 {
	v, _ := l.eval(z, y)
	return v
}

// Deriv implements losses.Margin.
func (l *glmLoss) Deriv(z, y float64) float64 {
	_, d := l.eval(z, y)
	return d
}

// Deriv2 implements losses.Margin: NaN, not computed.
func (l *glmLoss) Deriv2(float64, float64) float64 { return math.NaN() }

// gridLabels returns the labels of the grid: -1 and +1 for a binary loss,
// -b, 0 and b for regression (b = bound, 1 when 0).
func gridLabels(task losses.Task, bound float64) []float64 {
	if task == losses.Binary {
		return []float64{-1, 1}
	}
	if bound == 0 {
		bound = 1
	}
	return []float64{-bound, 0, bound}
}

// checkLoss evaluates l at the margins of g for each label and returns an
// error wrapping ErrDeclared at the first point where it contradicts what
// is declared of it: when ref is not nil, the built-in loss it must equal
// (value and derivative to 1e-9 relative); otherwise its declared
// constants (|l'| <= Lz, l' Sz-Lipschitz between neighbouring points, and
// non-decreasing if Convex). A check at finitely many points, not a proof.
func checkLoss(l *glmLoss, ref losses.Margin, labels []float64, g grid) error {
	c := l.cons
	const tol = 1e-9
	for _, y := range labels {
		var zPrev, dPrev float64
		for i, z := range g.z {
			v, d := l.eval(z, y)
			if err := l.err(); err != nil {
				return err
			}
			if !check.Finite(v) || !check.Finite(d) {
				return fmt.Errorf("%w: l(%g, %g) = %v, l' = %v, want finite%s", ErrDeclared, z, y, v, d, g.hint(z))
			}
			if ref != nil {
				rv, rd := ref.Value1(z, y), ref.Deriv(z, y)
				if math.Abs(v-rv) > tol*math.Max(1, math.Abs(rv)) || math.Abs(d-rd) > tol*math.Max(1, math.Abs(rd)) {
					return fmt.Errorf("%w: at z = %g, y = %g the graph gives l = %.10g, l' = %.10g; %s gives %.10g, %.10g", ErrDeclared, z, y, v, d, l.name, rv, rd)
				}
				continue
			}
			if math.Abs(d) > c.Lz*(1+tol) {
				return fmt.Errorf("%w: |l'(%g, %g)| = %.6g > Lz = %g%s", ErrDeclared, z, y, math.Abs(d), c.Lz, g.hint(z))
			}
			if i > 0 {
				slope := (d - dPrev) / (z - zPrev)
				if math.Abs(slope) > c.Sz*(1+tol)+tol {
					return fmt.Errorf("%w: l' changes by %.6g per unit of z near z = %g, y = %g, more than Sz = %g%s", ErrDeclared, math.Abs(slope), z, y, c.Sz, g.hint(z))
				}
				if c.Convex && slope < -tol {
					return fmt.Errorf("%w: l' decreases near z = %g, y = %g, so the loss is not convex%s", ErrDeclared, z, y, g.hint(z))
				}
			}
			zPrev, dPrev = z, d
		}
	}
	return nil
}
