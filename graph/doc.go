// Package graph is the Gorgonia side of stabpriv: the graph engine of the
// trainer, the Gorgonia expression of every built-in loss (Expr, and the
// optional Expresser interface of a user loss), user models (Model) and a
// gorgonia.Solver with the trainer's update (Solver).
//
// # A leaf package
//
// No package of the library imports this one, so losses, datasets,
// trainer, stability, perturb and private link no Gorgonia. Package trainer
// holds the seam: a pass driver that makes the update the privacy analysis
// depends on (the permutations, the s-dropout masks keyed by seed, pass and
// position, the per-example clipping, the sum divided by b also for a short
// last minibatch, the decay, the prox, the projection and the averaging),
// and the interfaces of the kernels that compute gradients for it
// (trainer.MarginKernel, trainer.ExampleKernel, trainer.UserModel). Importing
// this package registers its kernel as trainer.Graph (as a database/sql
// driver registers itself), so trainer.Config.Engine stays an enum, the
// engine's name in Run records and model files stays "graph", and the
// stabpriv command's --engine graph works by one import. A program that sets
// Engine Graph without linking this package gets an error from trainer.New
// that names it. Both engines go through the same driver, so a seeded run
// gives the same weights with either up to rounding (1e-10 in the tests).
//
// # The batched engine
//
// For a loss with an expression, one graph per run computes the margins
// Z = X W^T of a whole minibatch (its b rows after s-dropout) and the sum of
// the losses of its rows, and one TapeMachine.RunAll per minibatch gives
// dL/dZ. Row i of dL/dZ is the margin gradient g_i = dl/dz(z_i, y_i) of
// example i alone, since no other row's loss depends on z_i, and example i's
// gradient in W is g_i x_i^T: the trainer clips it by its norm
// ||g_i|| ||x_i||, so per-example clipping costs no per-example run. (Gorgonia
// differentiates with respect to input nodes only, so the margins enter the
// loss as Z + E, E an input node of zeros.) A short last minibatch is padded
// with zero rows whose gradients are dropped. The built-in losses are built as
// whole-minibatch operations, a graph whose size does not depend on b.
//
// The cost of a run of the tape is mostly fixed (Gorgonia runs the tape on a
// goroutine of its own and allocates on every run), so the engine is slow
// per example at b = 1 and close to the native kernel at large b; the
// per-epoch benchmarks of package trainer (BenchmarkEpoch*) compare the two.
//
// # Where per-example gradients cannot be taken from a batch
//
// A Model has parameters of any shape, which need not enter the loss through
// margins z = W x: the gradient of a minibatch's summed loss then mixes the
// examples, and cannot be split into the per-example gradients that the
// clipping needs. A Model is therefore run once per example. A linear model
// with a loss of its own is batched: give the loss an Expr (Expresser) and
// train it as trainer.Config.Loss; its expression is built once per row of
// the minibatch, from row slices of Z and Y (a graph b times the size of one
// example's), and the native engine trains it too from its Grad.
//
// # Gorgonia behind the API
//
// Gorgonia panics on the calling goroutine (building, differentiating,
// compiling) are returned as errors wrapping ErrGraph (ErrExpr for an
// expression); graphs are built under a lock, because Gorgonia shares some
// constant nodes between graphs without synchronization. Gorgonia's Softplus
// and LogSumExp ops are not used (in v0.9.18 the first truncates, the second
// adds the maximum inside the logarithm), and its solvers' WithClip, which
// clamps the elements of a summed gradient, is not per-example L2 clipping:
// Solver clips each example's gradient in L2.
package graph
