// Package graph is the Gorgonia side of stabpriv: the entry point of a
// program that trains its own Gorgonia graph privately (NewTrainer for a
// linear model, TrainDPSGD for any differentiable graph), the
// graph engine of the trainer, the Gorgonia expression of every built-in
// loss (Expr, and the optional Expresser interface of a user loss), user
// models (Model) and a gorgonia.Solver with the trainer's update (Solver).
//
// # Training a program's own graph
//
// A program builds its graph: a weight vector w, the input x and label y
// of one example, the margin z = gorgonia.Mul(x, w) and a loss of z and y,
// its own (with Declared constants: |l'| <= Lz, l' Sz-Lipschitz, convexity)
// or a built-in loss's Expr. NewTrainer checks that the graph is a linear
// model (the loss reads x and w only through z) and the declaration on a
// grid of margins, which Trainer.Train widens to the whole range of
// margins its run can reach (kappa times the public bound on ||w||)
// before it trains; Trainer.Train runs SGD with the stability knobs of
// trainer.Config (step size, passes, minibatch, per-example clipping,
// s-dropout, elastic net, projection, averaging), with l' taken from the
// graph by Gorgonia's symbolic differentiation, and analyzes the run's
// stability (package stability: beta and Delta of every route);
// Trained.Release adds noise calibrated to Delta and (eps, delta) and
// returns the certificate (package release). A graph with no proven bound
// (not declared a linear model, nothing declared of its loss, a loss
// declared non-convex) trains all the same, by Gorgonia's gradients in its
// parameters, but its Release is refused with an error wrapping
// ErrNoBound that says why. examples/gorgonia is a whole program.
//
// # DP-SGD on a program's own graph
//
// A graph that is not a convex linear model (a multilayer perceptron, any
// differentiable per-example loss of any parameters) has no stability
// bound, but DP-SGD needs none: TrainDPSGD runs the graph once per example
// of each Poisson-sampled batch for the gradient of its loss in all the
// parameters, clips it to L2 norm C, adds Gaussian noise calibrated by the
// accountant (dpsgd.Calibrate, as the dp-sgd release method) to
// every step's sum, and returns the trained parameters, also set into the
// graph's nodes, with the dp-sgd certificate (dpsgd.Certificate).
// The batches come from trainer.PoissonSampler with the release's coins
// (dpsgd.Coins). modelfile.GraphRelease writes the release as a
// file that `stabpriv certify` verifies, the accountant's eps rebuilt from
// its constants (dpsgd.RebuildGraph). The graph is trusted to
// compute each example's loss from that example alone; a probe on
// synthetic rows refuses a graph that carries state from one example to
// the next (DPSGDNotes).
// examples/gorgonia-mlp is a whole program.
//
// # A leaf package
//
// No package of the library imports this one, so losses, datasets,
// trainer, stability, perturb, release and private link no Gorgonia; this
// one imports the trainer and, for NewTrainer, stability and release. Package trainer
// holds the seam: a pass driver that makes the update the privacy analysis
// depends on (the permutations, the s-dropout masks keyed by seed, pass and
// position, the per-example clipping, the sum divided by b also for a short
// last minibatch, the decay, the prox, the projection and the averaging),
// and the interfaces of the kernels that compute gradients for it
// (trainer.MarginKernel, trainer.ExampleKernel, trainer.UserModel). Importing
// this package registers its kernel as trainer.Graph (as a database/sql
// driver registers itself), so trainer.Config.Engine stays an enum, the
// engine's name in Run records and model files stays "graph", and the
// stabpriv command's --engine graph works by one import (in a stabpriv
// built with -tags graph). A program that sets
// Engine Graph without linking this package gets an error from trainer.New
// that names it. Both engines go through the same driver, so a seeded run
// gives the same weights with either up to rounding (1e-10 in the tests).
//
// # The batched engine
//
// For a loss with an expression, one graph per run computes the margins
// Z = X W^T of a whole minibatch (its b rows after s-dropout, one MatMul, a
// MatVec for K = 1) and the losses of its rows, and one run of its
// operations per minibatch gives dL/dZ for L the sum of those losses. Row i
// of dL/dZ is the margin gradient g_i = dl/dz(z_i, y_i) of example i alone,
// since no other row's loss depends on z_i, and example i's gradient in W
// is g_i x_i^T: the trainer clips it by its norm ||g_i|| ||x_i||, so
// per-example clipping costs no per-example run. A short last minibatch is
// padded with zero rows whose gradients are dropped. The built-in losses
// are built as whole-minibatch operations, a graph whose size does not
// depend on b.
//
// Gorgonia's symbolic differentiation (Backpropagate) takes dL/dZ from the
// vector of the rows' losses with a seed of ones, straight to the margins,
// and only the subgraph that dL/dZ needs is run: the product, the forward
// values the derivatives read and the backward nodes, without the losses'
// values, their sum, the gradients in X and W, or a zero input added to Z
// to make the margins an input node (as Grad, which differentiates with
// respect to input nodes only, would need). Inputs are bound once to
// tensors whose backing arrays the kernel fills before each run. The
// logistic loss is one operation of this package (softplus, whose
// derivative is a sigmoid operation, both with the formulas of
// losses.Logistic), so that its margin gradient takes 6 operations, not 15.
//
// The operations run in topological order on the calling goroutine, each
// by Gorgonia's own Do (a runner in this package), not by a TapeMachine,
// whose RunAll locks the calling goroutine to its thread, runs the tape on
// a new goroutine, and whose Reset drops every result so that each
// instruction allocates a new one at every run. From the second run on, an
// operation writes into its result of the run before (UsePreallocDo, or a
// unary in-place operation on a copy of its input) unless that result
// shares memory with another value of the graph (a reused result is
// cleared first, as the gradient of Slice adds into it);
// TestRunnerMatchesTape requires the TapeMachine's bits for every built-in
// loss and for a loss with an expression of its own. The per-epoch
// benchmarks of package trainer (BenchmarkEpoch*) compare the engine with
// the native kernel, and BenchmarkTapeRunAll of this package measures a run
// of an empty TapeMachine, the cost the runner avoids.
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
// Gorgonia panics (building, differentiating, compiling, and running, since
// the operations run on the calling goroutine) are returned as errors
// wrapping ErrGraph (ErrExpr for an expression); graphs are built under a
// lock, because Gorgonia shares some constant nodes between graphs without
// synchronization. Gorgonia's Softplus and LogSumExp ops are not used (in
// v0.9.18 the first truncates, the second adds the maximum inside the
// logarithm), and its solvers' WithClip, which
// clamps the elements of a summed gradient, is not per-example L2 clipping:
// Solver clips each example's gradient in L2.
package graph
