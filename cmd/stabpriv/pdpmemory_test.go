package main

import (
	"path/filepath"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/stabpriv/stabpriv/pdp/report"
)

// watchMemoryLimit records the limits the pdp command sets (not the reads,
// -1) until the test ends.
func watchMemoryLimit(t *testing.T) *[]int64 {
	t.Helper()
	var set []int64
	setMemoryLimit = func(l int64) int64 {
		if l >= 0 {
			set = append(set, l)
		}
		return debug.SetMemoryLimit(l)
	}
	t.Cleanup(func() { setMemoryLimit = debug.SetMemoryLimit })
	return &set
}

// TestPDPMemoryLimit checks that pdp analyses a simulated release under the
// soft memory limit sized from the rows it read (the embedded data: 569 x
// 30, one output), or under a lower limit already set, and restores the
// limit as it was; and that the analysis of a model file sets none.
func TestPDPMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	want := pdpMemoryLimit(report.PeakHeap(569, 30, 1))
	for _, c := range []struct {
		name string
		old  int64 // the limit before the run
		want int64 // during the analysis
	}{
		{"sized from the rows", before, want},
		{"a lower limit kept", want - 1, want - 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			debug.SetMemoryLimit(c.old)
			defer debug.SetMemoryLimit(before)
			set := watchMemoryLimit(t)
			if _, err := pdpRun(t, "pdp", "--out", filepath.Join(t.TempDir(), "out"), "--exact-top", "2"); err != nil {
				t.Fatal(err)
			}
			if got := []int64{c.want, c.old}; !slices.Equal(*set, got) {
				t.Errorf("limits set %v, want %v (the analysis's, then the one before)", *set, got)
			}
			if got := debug.SetMemoryLimit(-1); got != c.old {
				t.Errorf("limit after the run %d, want %d as before", got, c.old)
			}
		})
	}
	if want >= before || want < 4<<20 {
		t.Fatalf("limit %d for 569 x 30", want)
	}

	data := modelCSV(t, 120, 3)
	model := trainModel(t, data, "--standardize", "none", "--mechanism", "laplace", "--noise", "seeded", "--noise-seed", "3")
	set := watchMemoryLimit(t)
	if _, err := pdpRun(t, "pdp", "--model", model, "--data", data, "--exact-top", "2", "--out", filepath.Join(t.TempDir(), "out")); err != nil {
		t.Fatal(err)
	}
	if len(*set) != 1 || (*set)[0] != before {
		t.Errorf("limits set with --model %v, want only the restore to %d", *set, before)
	}
}
