package trainer

// prefetchRange asks the processor to bring the n float64s at p into cache.
// It is a hint: it never faults and changes no state.
//
//go:noescape
func prefetchRange(p *float64, n int)

// prefetch hints that row will be read soon.
func prefetch(row []float64) {
	if len(row) > 0 {
		prefetchRange(&row[0], len(row))
	}
}

// prefetchExample hints that the n float64s at x (a row), *norm and *y will
// be read soon, in one call.
//
//go:noescape
func prefetchExample(x *float64, n int, norm, y *float64)
