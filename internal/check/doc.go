// Package check holds the finiteness and range tests that the packages of
// the module repeat when they validate user input: a NaN or an infinity in
// a setting or a data entry is refused, never propagated.
//
// The functions answer a question and leave the wording of the error to the
// caller, which knows the name of the setting and the error it wraps
// (ErrConfig, ErrInvalid, ErrFormat, ...). The package is internal: it is a
// convenience of this module, not part of its API.
package check
