package main

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/perturb"
)

// after returns the number that follows the first occurrence of prefix in
// s.
func after(t *testing.T, s, prefix string) float64 {
	t.Helper()
	i := strings.Index(s, prefix)
	var v float64
	if i < 0 {
		t.Fatalf("no %q in:\n%s", prefix, s)
	}
	if _, err := fmt.Sscan(s[i+len(prefix):], &v); err != nil {
		t.Fatalf("%q: %v in:\n%s", prefix, err, s)
	}
	return v
}

func TestGorgonia(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, perturb.Seeded(1)); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	beta, delta := after(t, s, "beta = "), after(t, s, "Delta = ")
	if !(delta > 0) || math.IsInf(delta, 0) || !(beta > 0) || math.IsInf(beta, 0) {
		t.Errorf("beta %v, Delta %v, want finite > 0:\n%s", beta, delta, s)
	}
	if eps := after(t, s, "eps = "); eps != 1 {
		t.Errorf("eps %v, want 1:\n%s", eps, s)
	}
	if acc := after(t, s, "test accuracy (private): "); acc < 0.85 {
		t.Errorf("private test accuracy %v, want >= 0.85:\n%s", acc, s)
	}
	if !strings.Contains(s, "undeclared loss: no release: graph: no proven bound: nothing is declared of the loss") {
		t.Errorf("no refusal of the undeclared loss:\n%s", s)
	}
	if acc := after(t, s, "test accuracy (not private): "); acc < 0.9 {
		t.Errorf("non-private test accuracy %v, want >= 0.9:\n%s", acc, s)
	}

	// The program's own run: the secure source.
	out.Reset()
	if err := run(&out, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "eps = 1, delta = 0, private = true") {
		t.Errorf("a secure release is not private:\n%s", out.String())
	}
}
