package kernel

// Prefetch hints that row will be read soon. A hint changes no state; it
// does nothing without the assembly kernels.
func Prefetch(row []float64) {
	if hasPrefetch && len(row) > 0 {
		prefetchRange(&row[0], len(row))
	}
}

// PrefetchExample hints that the n float64s at x (a row), *norm and *y will
// be read soon, in one call. A hint never faults and changes no state; it
// does nothing without the assembly kernels.
func PrefetchExample(x *float64, n int, norm, y *float64) {
	if hasPrefetch {
		prefetchExample(x, n, norm, y)
	}
}
