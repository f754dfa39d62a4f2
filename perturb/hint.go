package perturb

import (
	"errors"

	"github.com/stabpriv/stabpriv/dp"
)

// Hint says how to fix the privacy settings that made Calibrate return
// err for mechanism m, in the flag words the stabpriv commands share
// (--epsilon, --delta, --mechanism), to be appended to the error's
// message: "" when it has no advice.
func Hint(m dp.Mechanism, err error) string {
	switch {
	case errors.Is(err, ErrClassicalRange):
		return " (pass --epsilon below 1, or --mechanism gaussian-analytic)"
	case errors.Is(err, ErrDelta) && m.Pure():
		return " (laplace and gamma are pure eps-DP: leave --delta at 0, or choose a Gaussian mechanism)"
	case errors.Is(err, ErrDelta):
		return " (the Gaussian mechanisms need --delta in (0, 1), e.g. --delta 1e-5)"
	}
	return ""
}
