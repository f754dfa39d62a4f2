//go:build !amd64

package trainer

// prefetch hints that row will be read soon; a no-op off amd64.
func prefetch([]float64) {}
