package private

import "errors"

// Sentinel errors. Every error of this package wraps one of them, or an
// error of the package that failed (trainer, stability, perturb).
var (
	// ErrSchema reports a schema that cannot be used: no label column,
	// classes missing or repeated, bounds that are malformed or do not
	// cover a feature column.
	ErrSchema = errors.New("private: invalid schema")
	// ErrData reports a table outside the domain of the guarantee: ragged
	// rows, a feature cell that is not a finite number, no rows.
	ErrData = errors.New("private: invalid data")
	// ErrBudget reports a privacy budget that is invalid or smaller than
	// the sum of its parts.
	ErrBudget = errors.New("private: invalid budget")
	// ErrOptions reports invalid options.
	ErrOptions = errors.New("private: invalid options")
	// ErrReleased reports a second release of the same trained weights.
	ErrReleased = errors.New("private: trained weights already released")
	// ErrModelFile reports a model file that is malformed, or whose
	// certificate does not verify.
	ErrModelFile = errors.New("private: invalid model file")
)
