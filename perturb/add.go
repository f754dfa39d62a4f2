package perturb

import (
	"fmt"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/trainer"
)

// Add returns a copy of the model m with the noise of cal added, drawn
// from src (nil means Secure()). m is not modified. The copy's weights are
// checked finite. It is the primitive of a release: it knows nothing of
// other releases of the same weights, nor of a certificate (package release
// writes one).
func Add(m *trainer.Model, cal Calibration, src Source) (*trainer.Model, error) {
	if src == nil {
		src = Secure()
	}
	out := &trainer.Model{Loss: m.Loss, Task: m.Task, K: m.K, D: m.D, W: append([]float64(nil), m.W...)}
	if err := addNoise(out.W, cal, src); err != nil {
		return nil, err
	}
	if i := check.FirstNonFinite(out.W); i >= 0 {
		return nil, fmt.Errorf("%w: released weight %d is %v", ErrSource, i, out.W[i])
	}
	return out, nil
}

// addNoise adds the calibrated noise of cal's mechanism to w in place.
func addNoise(w []float64, cal Calibration, src Source) error {
	n, err := Lookup(cal.Mechanism)
	if err != nil {
		return err
	}
	return n.Add(w, cal, src)
}
