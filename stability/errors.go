package stability

import (
	"errors"
	"fmt"
)

var (
	// ErrInvalid is wrapped by every error about an input out of range: a
	// nil or inconsistent Run record, a NaN, infinite or negative constant.
	ErrInvalid = errors.New("stability: invalid input")
	// ErrNotApplicable is wrapped by every error saying that a route's
	// conditions do not hold for a run; see NotApplicableError.
	ErrNotApplicable = errors.New("stability: route not applicable")
	// ErrNoRoute is returned by Report.Best when no route applies to a run.
	ErrNoRoute = errors.New("stability: no route applies")
)

// NotApplicableError says which route does not apply and why. It wraps
// ErrNotApplicable.
type NotApplicableError struct {
	Route  RouteID
	Reason string
}

// Error returns "stability: route <name> not applicable: <reason>".
func (e *NotApplicableError) Error() string {
	return fmt.Sprintf("stability: route %v not applicable: %s", e.Route, e.Reason)
}

// Unwrap returns ErrNotApplicable.
func (e *NotApplicableError) Unwrap() error { return ErrNotApplicable }

func notApplicable(r RouteID, format string, args ...any) error {
	return &NotApplicableError{Route: r, Reason: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}
