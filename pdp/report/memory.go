package report

import "runtime"

// PeakHeap returns an estimate, in bytes, of the largest live heap of
// Simulate on a data set of n rows of d features, with k outputs (1 but
// for the softmax loss: its number of classes), counting the data set
// read and what Simulate holds: the larger of the rows read and the rows
// prepared while prepare writes them (16 d + 53 bytes a row), and the
// prepared rows with the per-row values of the analysis (8 (d + 1) + 189
// bytes a row: a pdp.Diff, a few floats, the margins and curvatures of
// the objective and of a neighbour, 16 (k^2 + k - 2) more with k
// outputs); plus 4 MiB, and for each of the GOMAXPROCS goroutines of the
// one-step batches and the refinements, the memory it reuses and what it
// allocates while a collection runs (2,048 rows of 64 k (d + 1) + 1,024
// bytes, 4.9 MB at d = 20). On 2 cores, at the default split (20% held
// out), it is 4% to 21% above the live heap measured after every
// collection at 1,000,000 x 20 (373 MB), 1,000,000 x 5 (221 MB) and
// 100,000 x 20 (42 MB). The pdp command sizes its soft memory limit from
// it.
func PeakHeap(n, d, k int) int64 {
	n64, d64, k64 := int64(max(n, 0)), int64(max(d, 0)), int64(max(k, 1))
	prepare := n64 * (16*d64 + 53)
	analysis := n64 * (8*(d64+1) + 189 + 16*(k64*k64+k64-2))
	workers := int64(runtime.GOMAXPROCS(0)) * 2048 * (64*k64*(d64+1) + 1024)
	return max(prepare, analysis) + 4<<20 + workers
}
