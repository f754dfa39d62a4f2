package graph

import (
	"errors"
	"fmt"
	"sync"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/trainer"
)

// ErrGraph is wrapped by every error of the Gorgonia side: a graph that
// cannot be built, compiled or run, a value or gradient that is not a
// float64 tensor or scalar, a non-finite gradient (Solver), and a Gorgonia
// panic recovered at the API boundary.
var ErrGraph = errors.New("graph: graph engine")

func init() {
	trainer.RegisterEngine(trainer.Graph, newMarginKernel)
}

// graphBuild serializes the building of graphs. Gorgonia shares some
// constant nodes between all graphs and caches their hash lazily, without
// synchronization, so two graphs must not be built (or differentiated) at
// once; running compiled machines concurrently is fine.
var graphBuild sync.Mutex

// marginKernel is the batched engine of a loss with an expression: one
// graph computes the margins Z = X W^T of a whole minibatch and the losses of
// its rows, and one run of its operations gives dL/dZ, L their sum, whose row i is
// the margin gradient dl/dz(z_i, y_i) of example i alone (the losses of the
// other rows do not depend on z_i). The trainer clips and sums those
// per-example gradients, so the update is the native engine's.
type marginKernel struct {
	k, d, b    int
	multiclass bool
	pad        float64 // label of the padding rows of a short minibatch
	run        *runner
	wbuf       []float64 // K = 1: w; K > 1: W^T (d x K)
	xbuf       []float64 // b x d rows
	ybuf       []float64 // b labels, or b x K one-hot rows
	dz         *gorgonia.Node
}

// newMarginKernel builds and compiles the batched graph of p.Loss for
// minibatches of p.Batch rows. A short last minibatch is padded with zero
// rows, whose margin gradients are computed and dropped.
func newMarginKernel(p trainer.Problem) (_ trainer.MarginKernel, err error) {
	if p.Loss == nil || !hasExpr(p.Loss) {
		return nil, fmt.Errorf("%w: the graph engine needs a built-in loss or one implementing graph.Expresser", trainer.ErrConfig)
	}
	graphBuild.Lock()
	defer graphBuild.Unlock()
	defer recoverGraph(&err)
	m := &marginKernel{k: p.K, d: p.D, b: p.Batch, multiclass: p.Loss.Task() == losses.Multiclass}
	switch p.Loss.Task() {
	case losses.Binary:
		m.pad = 1
	}
	g := gorgonia.NewGraph()
	m.wbuf = make([]float64, p.K*p.D)
	m.xbuf = make([]float64, p.Batch*p.D)
	X := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(p.Batch, p.D), gorgonia.WithName("X"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(p.Batch, p.D), tensor.WithBacking(m.xbuf))))
	var W, Y *gorgonia.Node
	if p.K == 1 {
		W = gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(p.D), gorgonia.WithName("w"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(p.D), tensor.WithBacking(m.wbuf))))
	} else {
		W = gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(p.D, p.K), gorgonia.WithName("Wt"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(p.D, p.K), tensor.WithBacking(m.wbuf))))
	}
	if m.multiclass {
		m.ybuf = make([]float64, p.Batch*p.K)
		Y = gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(p.Batch, p.K), gorgonia.WithName("Y"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(p.Batch, p.K), tensor.WithBacking(m.ybuf))))
	} else {
		m.ybuf = make([]float64, p.Batch)
		Y = gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(p.Batch), gorgonia.WithName("y"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(p.Batch), tensor.WithBacking(m.ybuf))))
	}
	Z, err := gorgonia.Mul(X, W)
	if err != nil {
		return nil, fmt.Errorf("%w: margins X W^T: %w", ErrGraph, err)
	}
	loss, err := batchLosses(p.Loss, Z, Y)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGraph, err)
	}
	// The gradient of the sum of the elements of loss is backpropagated
	// from a seed of ones of its shape, straight to the margins Z: no sum
	// node and its gradient (a repeat of 1) in the run, and no zero input
	// added to Z to make the margins an input node as Grad requires.
	seed := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("dL"), gorgonia.WithValue(1.0))
	if !loss.IsScalar() {
		ones := make([]float64, loss.Shape().TotalSize())
		for i := range ones {
			ones[i] = 1
		}
		seed = gorgonia.NewTensor(g, tensor.Float64, loss.Dims(), gorgonia.WithShape(loss.Shape().Clone()...), gorgonia.WithName("dL"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(loss.Shape().Clone()...), tensor.WithBacking(ones))))
	}
	grads, err := gorgonia.Backpropagate(gorgonia.Nodes{loss}, gorgonia.Nodes{seed}, gorgonia.Nodes{Z})
	if err != nil {
		return nil, fmt.Errorf("%w: gradient of the %s loss in the margins: %w", ErrGraph, p.Loss.Name(), err)
	}
	m.dz = grads[0]
	// The runner executes only what dL/dZ needs: the forward values the
	// derivatives read, not the losses themselves, nor the gradients in X
	// and W that differentiating Z's product adds to the graph.
	if m.run, err = newRunner(m.dz); err != nil {
		return nil, err
	}
	return m, nil
}

// MarginGrads implements trainer.MarginKernel.
func (m *marginKernel) MarginGrads(gz, w, x, y []float64) (err error) {
	defer recoverGraph(&err)
	n, k, d := len(y), m.k, m.d
	if n < 1 || n > m.b || len(x) != n*d || len(gz) != n*k || len(w) != k*d {
		return fmt.Errorf("%w: margin gradients of %d rows, %d values, %d weights, want at most %d rows of %d", ErrGraph, n, len(x), len(w), m.b, d)
	}
	if k == 1 {
		copy(m.wbuf, w)
	} else {
		for c := 0; c < k; c++ {
			for j, v := range w[c*d : (c+1)*d] {
				m.wbuf[j*k+c] = v
			}
		}
	}
	copy(m.xbuf, x)
	clear(m.xbuf[n*d:])
	if m.multiclass {
		clear(m.ybuf)
		for q := 0; q < m.b; q++ {
			c := 0
			if q < n {
				c = int(y[q])
			}
			m.ybuf[q*k+c] = 1
		}
	} else {
		copy(m.ybuf, y)
		for q := n; q < m.b; q++ {
			m.ybuf[q] = m.pad
		}
	}
	if err := m.run.run(); err != nil {
		return err
	}
	v, err := floats(m.run.value(m.dz))
	if err != nil || len(v) != m.b*k {
		return fmt.Errorf("%w: margin gradients: %v", ErrGraph, err)
	}
	copy(gz, v[:n*k])
	return nil
}

// Close implements trainer.MarginKernel.
func (m *marginKernel) Close() error {
	m.run = nil
	return nil
}

// recoverGraph turns a panic into an error wrapping ErrGraph. It must be
// deferred directly.
func recoverGraph(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: recovered panic: %v", ErrGraph, r)
	}
}
