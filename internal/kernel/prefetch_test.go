package kernel

import "testing"

// TestPrefetchChangesNothing runs the hints on rows of every length up to
// 40, the empty row included, and checks that the data is unchanged.
func TestPrefetchChangesNothing(t *testing.T) {
	for n := 0; n <= 40; n++ {
		row := make([]float64, n+2)
		for j := range row {
			row[j] = float64(j) + 0.5
		}
		Prefetch(row[:n])
		if n > 0 {
			PrefetchExample(&row[0], n, &row[n], &row[n+1])
		}
		idx := make([]int, n)
		for q := range idx {
			idx[q] = (7 * q) % len(row)
		}
		HintAt(row, idx)
		ints := make([]int, len(row))
		for j := range ints {
			ints[j] = j
		}
		HintIntsAt(ints, idx)
		for j := range row {
			if row[j] != float64(j)+0.5 || ints[j] != j {
				t.Fatalf("n=%d: element %d = %v, %d after the hints", n, j, row[j], ints[j])
			}
		}
	}
}
