package trainer

import (
	"fmt"
	"sync"

	"github.com/stabpriv/stabpriv/losses"
)

// This file is the seam between the pass driver and the engines that
// compute gradients for it. The driver (native.go, its steps in
// native_step.go and fused.go) owns everything the
// stability analysis depends on: the permutations and s-dropout masks of the
// sampler, the schedule, the per-example clipping, the sum divided by b, the
// decay, the prox, the projection and the averaging. An engine only computes
// per-example gradients of the current weights. The native engine's kernel
// is inline in the driver; every other engine is a kernel behind the
// interfaces below, so no engine can change the update the privacy analysis
// certifies.

// Problem is what a kernel sees of a validated training problem.
type Problem struct {
	// Loss is the built-in (or user) loss; nil for a UserModel.
	Loss losses.Loss
	// Classes is Config.Classes.
	Classes int
	// N, D and K are the number of examples, of features and of outputs.
	N, D, K int
	// Batch is the minibatch size b: a kernel is never given more rows.
	Batch int
}

// MarginKernel computes the margin gradients of a loss on a minibatch: for
// a linear model z = W x, the gradient of example i in W is g_i x_i^T with
// g_i = dl/dz(W x_i, y_i) in R^K, so the K numbers g_i are all the driver
// needs to clip the example (by ||g_i|| ||x_i||) and add it to the step.
// Per-example gradients of every linear model with a margin loss can thus be
// taken from one batched computation.
//
// A MarginKernel is used by one run at a time and need not be safe for
// concurrent use.
type MarginKernel interface {
	// MarginGrads writes into gz (m x K, row-major) the margin gradients
	// g_i = dl/dz(W x_i, y_i) of the m = len(y) examples whose rows, after
	// s-dropout, are x (m x D, row-major), at the weights w (K x D,
	// row-major); 1 <= m <= Batch. The slices are valid only during the
	// call, and only gz may be written.
	MarginGrads(gz, w, x, y []float64) error
	// Close releases the kernel's resources.
	Close() error
}

// ExampleKernel computes the whole gradient of a model on one example. It is
// the kernel of a UserModel, whose parameters need not enter through margins
// z = W x: the gradient of a sum over a minibatch cannot then be split into
// the per-example gradients the clipping needs, so the driver asks for one
// example at a time.
type ExampleKernel interface {
	// Dim returns the number of parameters.
	Dim() int
	// Init writes the initial parameters into w (length Dim).
	Init(w []float64) error
	// ExampleGrad writes into g (length Dim) the gradient of the loss of
	// the example with row x (after s-dropout) and label y at the parameters
	// w, and returns the loss.
	ExampleGrad(g, w, x []float64, y float64) (float64, error)
	// Finish is called with the weights a successful run returns.
	Finish(w []float64) error
	// Close releases the kernel's resources.
	Close() error
}

// UserModel is a model with its own parameters and loss, trained in place
// of Config.Loss (graph.Model is one). Its runs are outside the class of
// models the stability package certifies.
type UserModel interface {
	// Kernel returns the kernel of one run on rows of d features. Errors
	// should wrap ErrConfig for a model that cannot be trained.
	Kernel(d int) (ExampleKernel, error)
}

// engines holds the kernel constructors of the registered engines.
var engines sync.Map // Engine -> func(Problem) (MarginKernel, error)

// RegisterEngine makes Config.Engine = e train the built-in losses with the
// kernels that newKernel returns, one per run. Package graph registers Graph
// when it is imported, so that this package links no Gorgonia. It panics
// for Native, an unknown engine or a nil constructor (programmer errors); a
// second registration replaces the first.
func RegisterEngine(e Engine, newKernel func(Problem) (MarginKernel, error)) {
	if e == Native || e.String() == fmt.Sprintf("Engine(%d)", int(e)) || newKernel == nil {
		panic(fmt.Sprintf("trainer: RegisterEngine(%v): only a non-native engine with a constructor can be registered", e))
	}
	engines.Store(e, newKernel)
}

// engineKernel returns the constructor registered for e.
func engineKernel(e Engine) (func(Problem) (MarginKernel, error), error) {
	f, ok := engines.Load(e)
	if !ok {
		return nil, fmt.Errorf("%w: engine %v is not linked into the program; import github.com/stabpriv/stabpriv/graph", ErrConfig, e)
	}
	return f.(func(Problem) (MarginKernel, error)), nil
}

// kernelProblem returns the Problem a kernel sees.
func (p *problem) kernelProblem() Problem {
	return Problem{Loss: p.loss, Classes: p.cfg.Classes, N: p.n, D: p.d, K: p.k, Batch: p.cfg.Batch}
}
