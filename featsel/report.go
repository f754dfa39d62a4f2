package featsel

import "fmt"

// Report summarizes a private feature selection against the non-private one.
//
// Privacy: only Threshold (when Static, or Dynamic with a data-independent
// noise scale) and Selected are functions of the private release alone.
// Reference, the metrics and ExpectedFlips are computed from the non-private
// weights: they are for evaluation and must not be released as private.
type Report struct {
	// Threshold is the T of the rule |w_kj| > T for some row k.
	Threshold float64 `json:"threshold"`
	// Selected are the features selected from the noisy weights and
	// Reference those selected from the non-private weights at the same T.
	Selected  []int `json:"selected"`
	Reference []int `json:"reference"`
	// Precision, Recall, F1 and Jaccard compare Selected with Reference
	// (see Metrics for the conventions on empty sets).
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	Jaccard   float64 `json:"jaccard"`
	// ExpectedFlips is the expected number of features whose decision
	// differs from the reference in a fresh release (see ExpectedFlips).
	ExpectedFlips float64 `json:"expected_flips"`
}

// NewReport thresholds the noisy (released) and the non-private K x D weights,
// both row-major as in trainer.Model.W, at the threshold of spec under the
// noise model, and compares the selections. Errors wrap ErrShape or
// ErrInvalid.
//
// The reference is thresholded at the same T, so that the metrics and
// ExpectedFlips measure the same event (the noise changing a decision). To
// compare instead with the support of the non-private elastic net, use
// Select(reference, k, d, 0) and Compare.
func NewReport(noisy, reference []float64, k, d int, spec ThresholdSpec, noise NoiseModel) (Report, error) {
	if err := checkWeights(noisy, k, d); err != nil {
		return Report{}, fmt.Errorf("%w (noisy weights)", err)
	}
	if err := checkWeights(reference, k, d); err != nil {
		return Report{}, fmt.Errorf("%w (reference weights)", err)
	}
	if err := checkNoise(noise); err != nil {
		return Report{}, err
	}
	t, err := spec.Resolve(noise, k)
	if err != nil {
		return Report{}, err
	}
	sel, _, err := Select(noisy, k, d, t)
	if err != nil {
		return Report{}, err
	}
	ref, _, err := Select(reference, k, d, t)
	if err != nil {
		return Report{}, err
	}
	m, err := Compare(sel, ref)
	if err != nil {
		return Report{}, err
	}
	flips, err := ExpectedFlips(reference, k, d, t, noise)
	if err != nil {
		return Report{}, err
	}
	return Report{
		Threshold:     t,
		Selected:      sel,
		Reference:     ref,
		Precision:     m.Precision,
		Recall:        m.Recall,
		F1:            m.F1,
		Jaccard:       m.Jaccard,
		ExpectedFlips: flips,
	}, nil
}
