package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/examples/internal/linecount"
	"github.com/stabpriv/stabpriv/perturb"
)

// TestMatrix checks the example's secure release (accuracy at least 0.8,
// no warning, a private certificate) and that a seeded one says it is not
// private. The secure noise is fresh, so the accuracy is random: over
// 3,000 runs its minimum was 0.859 (median 0.886, 1st percentile 0.871,
// a standard deviation of about 0.007) and none warned; 0.8 is more
// than ten standard deviations below the median, so the false-rejection
// probability is far below 1e-4.
func TestMatrix(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, nil); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	var acc float64
	if _, err := fmt.Sscanf(s, "test accuracy: %f\nwarnings: 0", &acc); err != nil || acc < 0.8 {
		t.Errorf("accuracy %v and warnings (%v), want >= 0.8 and none:\n%s", acc, err, s)
	}
	for _, want := range []string{"are 1-differentially private (pure DP)", "Noise source: secure", "declared bounds"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	out.Reset()
	if err := run(&out, perturb.Seeded(3)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "NOT PRIVATE") {
		t.Errorf("a seeded release does not say it is not private:\n%s", out.String())
	}
}

// TestLines holds the example to the line count its comment states, and to
// the target of at most 15 lines.
func TestLines(t *testing.T) {
	if n, err := linecount.Count("main.go"); err != nil || n != 13 {
		t.Errorf("%d lines of user code (%v), the comment says 13 (at most 15)", n, err)
	}
}
