package graph

import (
	"fmt"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/trainer"
)

// Model is a user-supplied Gorgonia model, the plugin path of the graph
// engine: a graph holding the trainable parameter nodes, an input node for
// one example, a label node and the scalar per-example loss. It implements
// trainer.UserModel: set it as trainer.Config.Model, with Engine Graph.
//
// The trainer runs the same SGD as for the built-in losses (the step order of
// trainer.Config), with w the concatenation of the values of all Params in
// order: clipping, the elastic net, projection and averaging act on that
// vector, and s-dropout drops coordinates of the input row. Row i of X is
// bound to Input, y[i] to Label.
//
// Per-example gradients: the parameters of a Model need not enter the loss
// through margins z = W x, so the gradient of a minibatch's summed loss
// cannot be split into the per-example gradients the clipping needs. A Model
// is therefore run once per example (one run of the operations that the
// loss and its gradients need, on the calling goroutine), not
// batched. A linear model with a loss of its own is batched: give the loss
// an Expr (Expresser) and train it as trainer.Config.Loss instead.
//
// Train returns a trainer.Model with K = 1, D = the total number of
// parameter elements, W their trained values concatenated in the order of
// Params, and Loss "user-graph"; its Task, Margins and Predict do not apply,
// evaluate the graph instead. The trained values (the average of the
// iterates if Config.Average) are also left in the Params' values.
//
// The Run record has UserModel = true and zero loss constants: runs on a
// user model are outside the class of models the stability package
// certifies. Objective and GradNorm are computed with the graph: the mean
// loss over the rows plus R(w), and the minimum-norm subgradient of that
// objective, so Config.Tolerance works as for the built-in losses.
//
// Each example runs only the operations that Loss and its gradients need:
// other nodes of Graph (a gorgonia.Read statement, a value a caller
// watches) are not computed during training, and the values of the nodes
// that are computed stay with the engine (read the trained Params).
//
// Training adds the gradient nodes of Loss to Graph on first use (they are
// reused by later runs) and changes the Params' values, so a Model must not
// be trained by two goroutines at once. Gorgonia shares some constant nodes
// between all graphs without synchronization: this package builds its
// graphs under a lock, but a caller building another graph at the same time
// as a Train call is racing inside Gorgonia.
//
// Gorgonia panics (building, differentiating, compiling, and inside an
// operation while it runs) are returned as errors wrapping ErrGraph.
type Model struct {
	// Graph is the expression graph that holds every node below.
	Graph *gorgonia.ExprGraph
	// Params are the trainable parameter nodes: float64 tensors or scalars
	// with initial values bound (for example with gorgonia.WithInit).
	Params []*gorgonia.Node
	// Input is the input node of one example: a float64 node with d
	// elements (a vector of length d, the number of columns of X). The
	// trainer binds its own value to it.
	Input *gorgonia.Node
	// Label is the input node of the label: a float64 scalar.
	Label *gorgonia.Node
	// Loss is the per-example loss: a float64 scalar node.
	Loss *gorgonia.Node

	// grads caches the gradient nodes of gradLoss with respect to
	// gradParams (Loss and Params when they were built), so repeated runs
	// do not grow the graph.
	gradLoss   *gorgonia.Node
	gradParams []*gorgonia.Node
	grads      []*gorgonia.Node
}

var _ trainer.UserModel = (*Model)(nil)

// Kernel implements trainer.UserModel: it validates the model for rows of
// d features, adds the gradient nodes on first use and compiles the graph.
// Errors wrap trainer.ErrConfig.
func (m *Model) Kernel(d int) (_ trainer.ExampleKernel, err error) {
	graphBuild.Lock()
	defer graphBuild.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %w: recovered panic: %v", trainer.ErrConfig, ErrGraph, r)
		}
	}()
	if err := m.validate(d); err != nil {
		return nil, err
	}
	grads, err := m.gradients()
	if err != nil {
		return nil, err
	}
	e := &exampleKernel{loss: m.Loss}
	for i, n := range m.Params {
		v, err := floats(n.Value())
		if err != nil {
			return nil, fmt.Errorf("%w: param %d (%s): %w", trainer.ErrConfig, i, n.Name(), err)
		}
		e.vals = append(e.vals, v)
		e.grads = append(e.grads, grads[i])
		e.dim += len(v)
	}
	e.xbuf = make([]float64, d)
	if err := gorgonia.Let(m.Input, tensor.New(tensor.WithShape(m.Input.Shape().Clone()...), tensor.WithBacking(e.xbuf))); err != nil {
		return nil, fmt.Errorf("%w: input node: %w", trainer.ErrConfig, err)
	}
	e.y = gorgonia.NewF64(0)
	if err := gorgonia.Let(m.Label, e.y); err != nil {
		return nil, fmt.Errorf("%w: label node: %w", trainer.ErrConfig, err)
	}
	if e.run, err = newRunner(append([]*gorgonia.Node{m.Loss}, e.grads...)...); err != nil {
		return nil, fmt.Errorf("%w: %w", trainer.ErrConfig, err)
	}
	return e, nil
}

// exampleKernel runs a Model once per example.
type exampleKernel struct {
	run   *runner
	loss  *gorgonia.Node
	grads []*gorgonia.Node // the gradient nodes of the params
	vals  [][]float64      // live elements of the param values
	xbuf  []float64        // live elements of the input value
	y     *gorgonia.F64
	dim   int
}

// Dim implements trainer.ExampleKernel.
func (e *exampleKernel) Dim() int { return e.dim }

// Init implements trainer.ExampleKernel: the initial values of the params.
func (e *exampleKernel) Init(w []float64) error {
	gather(w, e.vals)
	return nil
}

// ExampleGrad implements trainer.ExampleKernel.
func (e *exampleKernel) ExampleGrad(g, w, x []float64, y float64) (_ float64, err error) {
	defer recoverGraph(&err)
	scatter(e.vals, w)
	copy(e.xbuf, x)
	*e.y = gorgonia.F64(y)
	if err := e.run.run(); err != nil {
		return 0, err
	}
	off := 0
	for i, n := range e.grads {
		gi, err := floats(e.run.value(n))
		if err != nil || len(gi) != len(e.vals[i]) {
			return 0, fmt.Errorf("%w: gradient of param %d: %v", ErrGraph, i, err)
		}
		off += copy(g[off:], gi)
	}
	lv, err := floats(e.run.value(e.loss))
	if err != nil || len(lv) != 1 {
		return 0, fmt.Errorf("%w: loss value: %v", ErrGraph, err)
	}
	return lv[0], nil
}

// Finish implements trainer.ExampleKernel: it leaves w in the params.
func (e *exampleKernel) Finish(w []float64) error {
	scatter(e.vals, w)
	return nil
}

// Close implements trainer.ExampleKernel.
func (e *exampleKernel) Close() error {
	e.run = nil
	return nil
}

// validate checks a user model for data with d features. Errors wrap
// trainer.ErrConfig.
func (m *Model) validate(d int) error {
	if m.Graph == nil {
		return fmt.Errorf("%w: graph model without a graph", trainer.ErrConfig)
	}
	if len(m.Params) == 0 {
		return fmt.Errorf("%w: graph model without parameters", trainer.ErrConfig)
	}
	nodes := []struct {
		name string
		n    *gorgonia.Node
	}{{"input", m.Input}, {"label", m.Label}, {"loss", m.Loss}}
	for i, n := range m.Params {
		nodes = append(nodes, struct {
			name string
			n    *gorgonia.Node
		}{fmt.Sprintf("param %d", i), n})
	}
	seen := make(map[*gorgonia.Node]string, len(nodes))
	for _, n := range nodes {
		if n.n == nil {
			return fmt.Errorf("%w: graph model %s node is nil", trainer.ErrConfig, n.name)
		}
		if n.n.Graph() != m.Graph {
			return fmt.Errorf("%w: graph model %s node %s is not in the model's graph", trainer.ErrConfig, n.name, n.n.Name())
		}
		if n.n.Dtype() != tensor.Float64 {
			return fmt.Errorf("%w: graph model %s node %s has dtype %v, want float64", trainer.ErrConfig, n.name, n.n.Name(), n.n.Dtype())
		}
		if prev, ok := seen[n.n]; ok {
			return fmt.Errorf("%w: graph model %s and %s are the same node %s", trainer.ErrConfig, prev, n.name, n.n.Name())
		}
		seen[n.n] = n.name
	}
	if got := m.Input.Shape().TotalSize(); m.Input.IsScalar() || got != d {
		return fmt.Errorf("%w: graph model input %s has shape %v, want %d elements (the columns of X)", trainer.ErrConfig, m.Input.Name(), m.Input.Shape(), d)
	}
	if m.Input.Op() != nil || m.Label.Op() != nil {
		return fmt.Errorf("%w: graph model input and label must be input nodes, not results of operations", trainer.ErrConfig)
	}
	if !m.Label.IsScalar() {
		return fmt.Errorf("%w: graph model label %s has shape %v, want a scalar", trainer.ErrConfig, m.Label.Name(), m.Label.Shape())
	}
	if !m.Loss.IsScalar() {
		return fmt.Errorf("%w: graph model loss %s has shape %v, want a scalar", trainer.ErrConfig, m.Loss.Name(), m.Loss.Shape())
	}
	for i, n := range m.Params {
		if n.Op() != nil {
			return fmt.Errorf("%w: graph model param %d (%s) is the result of an operation, want an input node", trainer.ErrConfig, i, n.Name())
		}
		if _, err := floats(n.Value()); err != nil {
			return fmt.Errorf("%w: graph model param %d (%s): %w", trainer.ErrConfig, i, n.Name(), err)
		}
	}
	return nil
}

// gradients returns the gradient nodes of Loss with respect to Params,
// adding them to the graph on first use. Errors wrap trainer.ErrConfig.
func (m *Model) gradients() (grads []*gorgonia.Node, err error) {
	if m.gradLoss == m.Loss && len(m.gradParams) == len(m.Params) {
		same := true
		for i, n := range m.Params {
			same = same && m.gradParams[i] == n
		}
		if same {
			return m.grads, nil
		}
	}
	defer func() {
		if r := recover(); r != nil {
			grads, err = nil, fmt.Errorf("%w: %w: gradient of the loss: %v", trainer.ErrConfig, ErrGraph, r)
		}
	}()
	if grads, err = gorgonia.Grad(m.Loss, m.Params...); err != nil {
		return nil, fmt.Errorf("%w: gradient of the loss: %w", trainer.ErrConfig, err)
	}
	if len(grads) != len(m.Params) {
		return nil, fmt.Errorf("%w: %d gradients for %d params", ErrGraph, len(grads), len(m.Params))
	}
	m.gradLoss, m.gradParams, m.grads = m.Loss, append([]*gorgonia.Node(nil), m.Params...), grads
	return grads, nil
}
