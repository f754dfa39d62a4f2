package release

import (
	"fmt"
	"strings"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/trainer"
)

// Certificate is what a release publishes about itself: the privacy claim
// (dp.Claim: mechanism, budget, sensitivity, neighbouring relation, ledger,
// what is not covered) and the public record of the training run that
// backs the claim's sensitivity. It serializes to JSON with the claim's
// fields first and the run nested under "run"; the fields of both are
// promoted (c.Epsilon, c.N, c.Kappa, ...).
type Certificate struct {
	dp.Claim
	// Run is a copy of the training run record: every constant used, with
	// the statistics of the data withheld (see the Assumptions).
	*trainer.Run `json:"run"`
}

// String explains the certificate in words: the claim, what its noise is
// (perturb.Describe) and the constants of the run.
func (c *Certificate) String() string {
	if c == nil {
		return "<nil certificate>"
	}
	text := c.Claim.Explain(perturb.Describe(c.Mechanism, c.NoiseScale, c.Dim), runText(c.Run))
	if c.Mechanism == perturb.DPSGD {
		// DP-SGD has no L1 sensitivity and no uniform stability: the claim
		// stores 0 for both (the model file's JSON keeps them), which the
		// text must not present as values.
		old := fmt.Sprintf("Sensitivity: L2 = %g (L1 = %g), route: %s; uniform stability beta = %g.\n", c.L2Sensitivity, c.L1Sensitivity, c.SensitivityRoute, c.Beta)
		text = strings.Replace(text, old, fmt.Sprintf("Sensitivity: L2 = %g per example's clipped gradient (L1 not applicable), route: %s; uniform stability beta: not applicable for dp-sgd.\n", c.L2Sensitivity, c.SensitivityRoute), 1)
	}
	return text
}

// runText says in words what the training run r was: three lines of
// Certificate.String, two for a run without SGD ("" for a nil run).
func runText(r *trainer.Run) string {
	if r == nil {
		return ""
	}
	head := fmt.Sprintf("Training run: loss %s (%s), n = %d, d = %d, K = %d, kappa = %g, L = %g, smoothness = %g, lambda = %g, l1 ratio = %g, mu = %g,\n", r.Loss, r.Task, r.N, r.D, r.K, r.Kappa, r.L, r.BetaS, r.Lambda, r.L1Ratio, r.Mu)
	if r.Schedule == "" {
		// No SGD ran (a decision stump): no schedule, step or engine.
		return head + fmt.Sprintf("  seed %d.\n", r.Seed)
	}
	return head +
		fmt.Sprintf("  schedule %s, eta = %g, passes %d, batch %d, clip G = %g, dropout s = %g, radius R = %g, averaging %v, sampling %s,\n", r.Schedule, r.Eta, r.Passes, r.Batch, r.Clip, r.Dropout, r.Radius, r.Average, r.Sampling) +
		fmt.Sprintf("  tolerance %g, engine %s, seed %d.\n", r.Tolerance, r.Engine, r.Seed)
}

// OutputCertificate returns the certificate that Weights writes for a release
// with calibration cal, sensitivity sens, run record run, noise source kind
// sourceKind (a certificate's Source: SourceSecure, SourceSeeded, ...) and
// the caller's notes, with WeightsSHA256 empty. It reads no weights: a
// verifier rebuilds a certificate from the constants it publishes and
// compares. A nil run is an error wrapping ErrConfig: the certificate
// publishes the run's constants.
func OutputCertificate(cal perturb.Calibration, sens perturb.Sensitivity, run *trainer.Run, sourceKind string, notes []string) (*Certificate, error) {
	if run == nil {
		return nil, fmt.Errorf("%w: no run record", ErrConfig)
	}
	return newOutputCertificate(cal, sens, run, sourceKind, notes, nil), nil
}

func newOutputCertificate(cal perturb.Calibration, sens perturb.Sensitivity, run *trainer.Run, kind string, notes []string, comp *dp.Composition) *Certificate {
	noise, lookupErr := perturb.LookupStatement(cal.Mechanism)
	if lookupErr != nil {
		// A calibration from Calibrate always names a registered
		// mechanism; a hand-built one that does not gets a certificate
		// that claims nothing.
		noise = unknownNoise{}
	}
	r, withheld := publicRun(run)
	route := sens.Route
	if route == "" {
		route = "unspecified"
	}
	c := &Certificate{Claim: dp.Claim{
		Version:          dp.CertificateVersion,
		Private:          kind == perturb.SourceSecure && lookupErr == nil,
		Mechanism:        cal.Mechanism,
		Epsilon:          cal.Epsilon,
		Delta:            cal.Delta,
		Dim:              cal.Dim,
		L2Sensitivity:    cal.L2,
		L1Sensitivity:    cal.L1,
		SensitivityRoute: route,
		Beta:             sens.Beta,
		NoiseScale:       cal.Scale,
		NoiseScaleName:   noise.ScaleName(),
		Neighbouring:     perturb.ReplaceOneText,
		Source:           kind,
		Composition:      comp,
		Citation:         noise.Citation(),
	}, Run: r}
	c.Assumptions = []string{
		"the sensitivity bound (route: " + route + ") is taken as given; the conditions of its route are checked by the stability analysis, not here",
	}
	if sens.Neighbouring != "" && sens.Neighbouring != perturb.ReplaceOne {
		c.Assumptions = append(c.Assumptions, "the sensitivity bound holds for the neighbouring relation: "+sens.Neighbouring)
	}
	c.Assumptions = append(c.Assumptions,
		"the claim is about the rows the trainer received: what happened to them before (preprocessing, selection of the settings) is covered only as this list states",
		"the run constants in this certificate (including n) are published in the clear",
		withheld,
		"only one release of these trained weights is covered; a second release of the same weights needs its own budget",
	)
	switch {
	case lookupErr != nil:
		c.Assumptions = append(c.Assumptions, "no claim is made: "+lookupErr.Error())
	case kind == perturb.SourceSeeded:
		c.Assumptions = append(c.Assumptions, "the noise was drawn from a seeded generator and can be recomputed from the seed: not for release")
	case kind != perturb.SourceSecure:
		c.Assumptions = append(c.Assumptions, "the noise came from a caller-supplied source whose quality is not verified")
	default:
		c.Assumptions = append(c.Assumptions, noise.SamplerNote(cal))
	}
	c.Assumptions = append(c.Assumptions, noise.Notes(cal)...)
	c.Assumptions = append(c.Assumptions, notes...)
	return c
}

// publicRun returns the copy of run that a certificate publishes: every
// constant of the run, without the statistics of the non-private weights and
// the data that the claim does not cover, and a note saying what was withheld.
// Withheld: the objective and the gradient norm at the non-private weights,
// the count of rows the trainer clipped, and the training time (always); and
// when a tolerance chose the number of passes, the passes done and their step
// records, since the stopping pass depends on the data.
func publicRun(run *trainer.Run) (*trainer.Run, string) {
	r := *run
	r.Stats = trainer.Stats{}
	note := "the run record withholds the objective and gradient norm of the non-private weights, the count of rows the trainer clipped, the passes done and the training time: they are statistics of the data that the claim does not cover"
	if run.Tolerance > 0 {
		r.PassMaxStep, r.PassMinStep = nil, nil
		note += "; the number of passes done and their step sizes are withheld too, because a tolerance chose when to stop"
		return &r, note
	}
	r.PassMaxStep = append([]float64(nil), run.PassMaxStep...)
	r.PassMinStep = append([]float64(nil), run.PassMinStep...)
	return &r, note
}

// unknownNoise stands for a mechanism that is not registered in a
// certificate, which then makes no claim; it is never in the registry.
type unknownNoise struct{ perturb.Statement }

func (unknownNoise) ScaleName() string                  { return "" }
func (unknownNoise) Citation() string                   { return "" }
func (unknownNoise) Notes(perturb.Calibration) []string { return nil }
