//go:build !amd64

package trainer

// prefetch hints that row will be read soon; a no-op off amd64.
func prefetch([]float64) {}

// prefetchExample hints that a row, its norm and its label will be read
// soon; a no-op off amd64.
func prefetchExample(*float64, int, *float64, *float64) {}
