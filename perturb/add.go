package perturb

import (
	"fmt"

	"github.com/stabpriv/stabpriv/internal/check"
)

// Add adds the noise of cal to w in place, drawn from src (nil means
// Secure()), and checks every entry of the result finite. It is the
// primitive of a release: it knows nothing of a model, of other releases
// of the same numbers, nor of a certificate (package release adds the
// noise to a copy of the trained weights and writes the certificate). On
// an error w holds no release: it may be partly perturbed.
func Add(w []float64, cal Calibration, src Source) error {
	if src == nil {
		src = Secure()
	}
	if err := addNoise(w, cal, src); err != nil {
		return err
	}
	if i := check.FirstNonFinite(w); i >= 0 {
		return fmt.Errorf("%w: released weight %d is %v", ErrSource, i, w[i])
	}
	return nil
}

// addNoise adds the calibrated noise of cal's mechanism to w in place.
func addNoise(w []float64, cal Calibration, src Source) error {
	n, err := Lookup(cal.Mechanism)
	if err != nil {
		return err
	}
	return n.Add(w, cal, src)
}
