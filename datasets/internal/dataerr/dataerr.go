// Package dataerr holds the two error kinds of the datasets packages, so
// that a leaf package (datasets/fetch) can wrap them without importing
// datasets and what datasets imports.
package dataerr

import "errors"

var (
	// ErrFormat is wrapped by every error about bad content of a file or
	// a download. datasets.ErrFormat is this value.
	ErrFormat = errors.New("datasets: bad data format")
	// ErrInvalid is wrapped by every error about a bad argument.
	// datasets.ErrInvalid is this value.
	ErrInvalid = errors.New("datasets: invalid argument")
)
