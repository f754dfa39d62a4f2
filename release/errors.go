package release

import "errors"

// ErrReleased reports a second release of the same trained weights, or a
// release of weights that were revealed in the clear.
var ErrReleased = errors.New("release: trained weights already released")
