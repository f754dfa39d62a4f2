package dpsgd

import (
	"errors"
	"fmt"
	"slices"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// The DP-SGD of a program's own Gorgonia graph (graph.TrainDPSGD) is
// certified by the dp-sgd certificate with a run record of its own
// (GraphRun) and notes of its own (GraphNotes); its release file
// (modelfile.GraphRelease) is verified by RebuildGraph.
const (
	// GraphLoss is the loss name of the run record of a graph's DP-SGD, as
	// trainer.Train names a user model's.
	GraphLoss = "user-graph"
	// GraphProbeRows is the number of synthetic rows on which
	// graph.TrainDPSGD checks that a graph keeps no state from one example
	// to the next.
	GraphProbeRows = 4
)

// GraphNotes returns what the certificate of a graph's DP-SGD adds to the
// list of what its claim does not cover, for a probe of m rows.
func GraphNotes(m int) []string {
	return []string{
		"nothing about the graph's loss is assumed (convexity, smoothness, Lipschitz constants): the clipping bounds every example's gradient whatever the graph computes",
		fmt.Sprintf("the program's graph is trusted to compute each example's loss from that example's row and label alone (one run of the graph per example, only its row bound to the input node); checked on a public probe of %d synthetic rows (losses and gradients unchanged when another row changes or the order changes), not proven", m),
		"the initial parameter values are the program's, taken to be chosen without reading the rows",
		"a per-example gradient with a NaN or infinite element counts as zero in its step's sum (a map into the ball of radius C, which the sensitivity allows)",
		"an example whose run of the graph fails (an error or a panic) counts as zero in its step's sum, the run going on and the failure's text never shown: whether and where a row fails is data",
	}
}

// GraphRun returns the run record of a graph's DP-SGD on n rows with dim
// parameters, the constant step eta, the expected batch, the passes and
// the clipping norm clip, at the calibrated noise (Calibrate for n, batch
// and passes): every field a function of these public values. Errors wrap
// release.ErrConfig.
func GraphRun(n, dim, batch, passes int, eta, clip float64, noise Noise) (*trainer.Run, error) {
	if dim < 1 || !check.Positive(eta) || !check.Positive(clip) {
		return nil, fmt.Errorf("%w: a graph's DP-SGD with %d parameters, step %v, clip %v: want >= 1, finite > 0, finite > 0", release.ErrConfig, dim, eta, clip)
	}
	run := trainer.Run{
		Loss: GraphLoss, Task: "user", D: dim, K: 1,
		Schedule: trainer.Constant.String(), Eta: eta, Passes: passes, Batch: batch,
		Clip: clip, Dropout: 1, Sampling: trainer.SamplingPoisson,
		Engine: trainer.Graph.String(), UserModel: true,
	}
	run, err := run.OnRows(n, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", release.ErrConfig, err)
	}
	if steps := passes * run.StepsPerPass; steps != noise.Steps {
		return nil, fmt.Errorf("%w: a graph's DP-SGD of %d steps, the accountant's %d", release.ErrConfig, steps, noise.Steps)
	}
	run.DPSGD = &trainer.DPSGDRecord{SampleRate: noise.SampleRate, NoiseMultiplier: noise.NoiseMultiplier, NoiseStd: noise.NoiseMultiplier * clip, Steps: noise.Steps}
	return &run, nil
}

// RebuildGraph returns the certificate that a graph's DP-SGD writes for
// the published inputs of c: the budget, n, the number of parameters, the
// step, the expected batch, the passes, the clipping norm and the noise
// source. From them it recomputes the noise multiplier by the accountant
// (Calibrate), the run record (GraphRun), the accountant's eps, the ledger
// and the notes (GraphNotes); the notes the program added after those are
// taken as written. A certificate whose noise multiplier, step count,
// sample rate or any other field was edited differs from the one returned.
// The weights' hash and the noise seed are copied from c (the caller
// checks the hash against the weights).
func RebuildGraph(c *release.Certificate) (*release.Certificate, error) {
	if c == nil || c.Run == nil || c.Run.DPSGD == nil {
		return nil, errors.New("a graph's dp-sgd certificate without its run record and dp_sgd constants")
	}
	run := c.Run
	switch {
	case c.Mechanism != perturb.DPSGD:
		return nil, fmt.Errorf("mechanism %q: a graph's release file holds a dp-sgd release", c.Mechanism)
	case run.Loss != GraphLoss || !run.UserModel:
		return nil, fmt.Errorf("loss %q (user model %v): a graph's dp-sgd run has the loss %q", run.Loss, run.UserModel, GraphLoss)
	}
	b := dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}
	noise, err := Calibrate(b, run.N, run.Batch, run.Passes)
	if err != nil {
		return nil, err
	}
	want, err := GraphRun(run.N, run.D, run.Batch, run.Passes, run.Eta, run.Clip, noise)
	if err != nil {
		return nil, err
	}
	fixed := GraphNotes(GraphProbeRows)
	base, err := certificate(b, noise.cal, want, c.Source, fixed)
	if err != nil {
		return nil, err
	}
	var notes []string
	if k := len(base.Assumptions); len(c.Assumptions) > k {
		notes = c.Assumptions[k:] // the program's own notes
	}
	cert, err := certificate(b, noise.cal, want, c.Source, slices.Concat(fixed, notes))
	if err != nil {
		return nil, err
	}
	if c.Source == perturb.SourceSeeded {
		if c.NoiseSeed == nil {
			return nil, errors.New("a seeded release without its noise seed")
		}
		seed := *c.NoiseSeed
		cert.NoiseSeed = &seed
	}
	cert.WeightsSHA256 = c.WeightsSHA256
	return cert, nil
}
