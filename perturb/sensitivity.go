package perturb

import (
	"fmt"
	"math"
	"strings"

	"github.com/stabpriv/stabpriv/internal/check"
)

// ReplaceOne is the neighbouring relation of every guarantee in this package.
const ReplaceOne = "replace-one"

// ReplaceOneText is the neighbouring relation ReplaceOne spelled out in a
// certificate.
const ReplaceOneText = "replace-one: S and S' of equal size differ in one example"

// Sensitivity states how much the trained weights can move between
// neighbouring data sets. The stability package produces it; this package
// takes it as given and does not re-check the conditions of its route.
// release.FromReport builds it from a stability report, with the report's
// assumptions as notes for the certificate, and refuses a report in which
// no route applies.
type Sensitivity struct {
	// L2 > 0 bounds ||w_S - w_S'||_2 over all replace-one neighbours S, S'
	// (for a K x d model: the Frobenius norm of the whole matrix). Required.
	L2 float64 `json:"l2"`
	// L1 bounds ||w_S - w_S'||_1. Zero means sqrt(dim)*L2 (Cauchy-Schwarz);
	// a positive value must be >= L2, and the smaller of L1 and sqrt(dim)*L2
	// is used.
	L1 float64 `json:"l1,omitempty"`
	// Beta is the uniform stability of the training algorithm, recorded for
	// the user (it is what the knobs tune); it does not enter the noise.
	// Zero means not reported.
	Beta float64 `json:"beta"`
	// Route names the bound that gave L2 (e.g. the stability route).
	Route string `json:"route"`
	// Neighbouring is the relation the bounds hold for. The empty string
	// means ReplaceOne; otherwise it must start with ReplaceOne (further
	// wording, e.g. that both runs share the seed, is recorded in the
	// certificate). Other relations are refused.
	Neighbouring string `json:"neighbouring"`
}

// Validate returns an error wrapping ErrSensitivity if the statement cannot
// back a certificate.
func (s Sensitivity) Validate() error {
	if err := checkPositive(ErrSensitivity, "L2 sensitivity", s.L2); err != nil {
		return err
	}
	if !check.NonNegative(s.L1) {
		return fmt.Errorf("%w: L1 sensitivity = %v, want finite >= 0", ErrSensitivity, s.L1)
	}
	if s.L1 > 0 && s.L1 < s.L2 {
		return fmt.Errorf("%w: L1 sensitivity %v below L2 sensitivity %v is impossible", ErrSensitivity, s.L1, s.L2)
	}
	if !check.NonNegative(s.Beta) {
		return fmt.Errorf("%w: beta = %v, want finite >= 0", ErrSensitivity, s.Beta)
	}
	if s.Neighbouring != "" && !strings.HasPrefix(s.Neighbouring, ReplaceOne) {
		return fmt.Errorf("%w: neighbouring relation %q, want %q", ErrSensitivity, s.Neighbouring, ReplaceOne)
	}
	return nil
}

// l1 returns the L1 sensitivity used in dimension dim.
func (s Sensitivity) l1(dim int) float64 {
	cs := math.Sqrt(float64(dim)) * s.L2
	if s.L1 > 0 && s.L1 < cs {
		return s.L1
	}
	return cs
}
