//go:build amd64 && !purego

package kernel

// prefetchRange asks the processor to bring the n float64s at p into cache.
// It is a hint: it never faults and changes no state.
//
//go:noescape
func prefetchRange(p *float64, n int)

// Prefetch hints that row will be read soon.
func Prefetch(row []float64) {
	if len(row) > 0 {
		prefetchRange(&row[0], len(row))
	}
}

// PrefetchExample hints that the n float64s at x (a row), *norm and *y will
// be read soon, in one call.
//
//go:noescape
func PrefetchExample(x *float64, n int, norm, y *float64)
