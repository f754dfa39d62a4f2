//go:build !linux

package hugepage

import "errors"

var errUnsupported = errors.New("hugepage: not supported")

// advise is a no-op without Linux's transparent huge pages.
func advise(b []byte) error { return errUnsupported }

// hugeBytes cannot tell without Linux's smaps.
func hugeBytes(lo, hi uintptr) (float64, error) { return 0, errUnsupported }
