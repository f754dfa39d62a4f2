package dp

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
)

// CertificateVersion is the format version written into every Certificate.
const CertificateVersion = "stabpriv-certificate/2"

// Composition describes a release that is one part of a composed release
// (one-vs-rest): its (Epsilon, Delta) in the certificate is its share, and
// the parts together satisfy (TotalEpsilon, TotalDelta).
type Composition struct {
	Rule         string  `json:"rule"`
	Parts        int     `json:"parts"`
	Index        int     `json:"index"`
	TotalEpsilon float64 `json:"total_epsilon"`
	TotalDelta   float64 `json:"total_delta"`
}

// Charge is one entry of a privacy ledger: a private step and the part of
// the budget it spent.
type Charge struct {
	Step      string    `json:"step"`
	Mechanism Mechanism `json:"mechanism"`
	Epsilon   float64   `json:"epsilon"`
	Delta     float64   `json:"delta"`
	// Rows names the part of the rows the step reads when a pipeline
	// splits them by position into disjoint parts (a holdout selection:
	// tuning and release rows). The claim is then the largest total over
	// the parts, not the sum of the entries (parallel composition). Empty
	// means all the rows: the entries add up.
	Rows string `json:"rows,omitempty"`
}

// Total returns the budget a ledger adds up to: the entries of each part
// of the rows (Charge.Rows) add up, an entry on all rows counts in every
// part, and the parts are disjoint, so the total is the largest part's.
func Total(ledger []Charge) Budget {
	all := Budget{}
	parts := map[string]Budget{}
	for _, c := range ledger {
		if c.Rows == "" {
			all.Epsilon += c.Epsilon
			all.Delta += c.Delta
			continue
		}
		p := parts[c.Rows]
		p.Epsilon += c.Epsilon
		p.Delta += c.Delta
		parts[c.Rows] = p
	}
	out := all
	for _, p := range parts {
		out.Epsilon = max(out.Epsilon, all.Epsilon+p.Epsilon)
		out.Delta = max(out.Delta, all.Delta+p.Delta)
	}
	return out
}

// FeatureBound is the range [Lo, Hi] of one feature column.
type FeatureBound struct {
	Column string  `json:"column"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
}

// Claim states what a release guarantees and under which assumptions: the
// mechanism, (eps, delta), the sensitivity it is calibrated to, the
// neighbouring relation, the ledger of the budget and what is not covered.
// It is the privacy part of a certificate: the record of the training run
// that backs the sensitivity is attached above this package
// (release.Certificate), whose JSON holds the claim's fields and the run.
type Claim struct {
	Version string `json:"version"`
	// Private reports whether the release is a private release: true only
	// for noise from the secure source. A seeded release can be recomputed
	// by anyone who knows its seed and makes no privacy claim, whatever
	// Epsilon says.
	Private bool `json:"private"`
	// Mechanism, Epsilon and Delta are the claim: the released weights are
	// (Epsilon, Delta)-DP with respect to Neighbouring.
	Mechanism Mechanism `json:"mechanism"`
	Epsilon   float64   `json:"epsilon"`
	Delta     float64   `json:"delta"`
	// Dim is the number of released numbers, K*D.
	Dim int `json:"dim"`
	// L2Sensitivity is the L2 sensitivity the noise is calibrated to (for
	// Laplace, L1Sensitivity is), from SensitivityRoute.
	L2Sensitivity    float64 `json:"l2_sensitivity"`
	L1Sensitivity    float64 `json:"l1_sensitivity"`
	SensitivityRoute string  `json:"sensitivity_route"`
	// Beta is the uniform stability reported with the sensitivity.
	Beta float64 `json:"beta"`
	// NoiseScale is the calibrated noise scale, named by NoiseScaleName:
	// b (Laplace scale per coordinate), theta (Gamma scale of the noise
	// norm) or sigma (Gaussian standard deviation per coordinate).
	NoiseScale     float64 `json:"noise_scale"`
	NoiseScaleName string  `json:"noise_scale_name"`
	Neighbouring   string  `json:"neighbouring"`
	// Source is SourceSecure, SourceSeeded or "custom: ..." for a
	// caller-supplied source.
	Source string `json:"source"`
	// NoiseSeed is the seed of a seeded source, published with the
	// release (nil for the secure source).
	NoiseSeed *uint64 `json:"noise_seed,omitempty"`
	// WeightsSHA256 binds the certificate to the released weights: the
	// SHA-256 of the weights (WeightsSHA256).
	WeightsSHA256 string `json:"weights_sha256"`
	// Ledger lists every private step of the pipeline that produced the
	// release and the budget it spent, taken from a Ledger of the claim
	// (Account); empty for a bare Release.
	Ledger []Charge `json:"ledger,omitempty"`
	// EstimatedBounds lists the feature bounds that a private step of the
	// pipeline estimated from the rows (the Ledger's first entry paid for
	// them) and the release then used as public constants; empty when the
	// bounds were declared. The claim (Epsilon, Delta) covers them and the
	// weights together.
	EstimatedBounds []FeatureBound `json:"estimated_bounds,omitempty"`
	// ComponentsSHA256 binds the private principal directions that a
	// private step of the pipeline computed from the rows (the Ledger
	// names it) and the preprocessing applies before the release: the
	// SHA-256 of the directions (WeightsSHA256 of their entries, direction
	// after direction). Empty without them. The claim covers them and the
	// weights together.
	ComponentsSHA256 string `json:"components_sha256,omitempty"`
	// Composition is set for a part of a one-vs-rest release.
	Composition *Composition `json:"composition,omitempty"`
	// Assumptions lists what the claim does not cover, including the
	// caller's notes.
	Assumptions []string `json:"not_covered"`
	Citation    string   `json:"citation"`
}

// String explains the claim in words (Explain with nothing to add).
func (c *Claim) String() string { return c.Explain("", "") }

// Explain explains the claim in words. law is the sentence that says what
// the noise of the mechanism is (perturb.Describe), written after the
// mechanism's name; run holds lines about the training run that backs the
// claim, each ending in a newline, written before the reference. Either
// may be empty.
func (c *Claim) Explain(law, run string) string {
	if c == nil {
		return "<nil certificate>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Privacy certificate (%s)\n", c.Version)
	if !c.Private {
		fmt.Fprintf(&b, "Claim: none. NOT PRIVATE: the noise (%s) came from the source %q and can be recomputed", c.Mechanism, c.Source)
		if c.NoiseSeed != nil {
			fmt.Fprintf(&b, " from the published noise seed %d", *c.NoiseSeed)
		}
		fmt.Fprintf(&b, "; the calibration below (eps = %g, delta = %g) is what a secure release would have used.\n", c.Epsilon, c.Delta)
	} else if c.Delta == 0 {
		fmt.Fprintf(&b, "Claim: the released weights (%d numbers) are %g-differentially private (pure DP)", c.Dim, c.Epsilon)
	} else {
		fmt.Fprintf(&b, "Claim: the released weights (%d numbers) are (%g, %g)-differentially private", c.Dim, c.Epsilon, c.Delta)
	}
	if c.Private {
		// The claim is about the neighbouring relation below; whatever
		// happened to the rows before it is covered only as the
		// not-covered list says.
		b.WriteString(" with respect to the neighbouring relation below; see what is not covered.\n")
	}
	fmt.Fprintf(&b, "Neighbouring data sets: %s.\n", c.Neighbouring)
	if c.Composition != nil {
		fmt.Fprintf(&b, "Composition: part %d of %d; all parts together are (%g, %g)-DP by %s.\n",
			c.Composition.Index+1, c.Composition.Parts, c.Composition.TotalEpsilon, c.Composition.TotalDelta, c.Composition.Rule)
	}
	fmt.Fprintf(&b, "Mechanism: %s.", c.Mechanism)
	if law != "" {
		b.WriteString(" " + law)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "Sensitivity: L2 = %g (L1 = %g), route: %s; uniform stability beta = %g.\n", c.L2Sensitivity, c.L1Sensitivity, c.SensitivityRoute, c.Beta)
	fmt.Fprintf(&b, "Noise source: %s.\n", c.Source)
	fmt.Fprintf(&b, "Weights: SHA-256 %s.\n", c.WeightsSHA256)
	for _, l := range c.Ledger {
		on := ""
		if l.Rows != "" {
			on = ", on the " + l.Rows
		}
		fmt.Fprintf(&b, "Budget spent by %s: eps = %g, delta = %g (%s%s).\n", l.Step, l.Epsilon, l.Delta, l.Mechanism, on)
	}
	if len(c.EstimatedBounds) > 0 {
		b.WriteString("Feature bounds estimated privately (released with the weights, covered by the claim):")
		for i, f := range c.EstimatedBounds {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(&b, "%s %s [%g, %g]", sep, f.Column, f.Lo, f.Hi)
		}
		b.WriteString(".\n")
	}
	if c.ComponentsSHA256 != "" {
		fmt.Fprintf(&b, "Principal directions computed privately (in the preprocessing, covered by the claim): SHA-256 %s.\n", c.ComponentsSHA256)
	}
	b.WriteString(run)
	fmt.Fprintf(&b, "Reference: %s.\n", c.Citation)
	b.WriteString("Assumptions, and what the claim does not cover:\n")
	for _, a := range c.Assumptions {
		fmt.Fprintf(&b, "  - %s\n", a)
	}
	return b.String()
}

// WeightsSHA256 returns the hex SHA-256 of the weights: the IEEE 754 bits of
// each weight, big-endian, in order. JSON keeps every float64 exactly, so
// the hash of weights read back from a model file equals the hash of the
// weights written.
func WeightsSHA256(w []float64) string {
	h := sha256.New()
	var b [8]byte
	for _, v := range w {
		binary.BigEndian.PutUint64(b[:], math.Float64bits(v))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// PositiveZeros writes every zero of w as +0, in place. A release applies
// it to what it publishes before hashing it (a post-processing, at no
// cost): the sign of a zero is a bit that no noise sets, and a verifier
// refuses a published -0 (NegativeZero), so it cannot carry anything.
func PositiveZeros(w []float64) {
	for i, v := range w {
		if v == 0 {
			w[i] = 0
		}
	}
}

// NegativeZero returns the index of the first -0 in w, or -1 when there
// is none.
func NegativeZero(w []float64) int {
	for i, v := range w {
		if v == 0 && math.Signbit(v) {
			return i
		}
	}
	return -1
}
