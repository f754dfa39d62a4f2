package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/perturb"
)

func TestPrivate(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, perturb.Seeded(1)); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	var delta, closed float64
	if _, err := fmt.Sscanf(s, "route strongly-convex-sgd: Delta = %f, beta = %f (2L/(mu n) = %f)", &delta, new(float64), &closed); err != nil || delta <= 0 || delta > closed*(1+1e-9) {
		t.Errorf("Delta %v, 2L/(mu n) %v (%v):\n%s", delta, closed, err, s)
	}
	const acc = "test accuracy: "
	i := strings.Index(s, acc)
	var priv float64
	if i < 0 {
		t.Fatalf("no accuracy in:\n%s", s)
	}
	// Deterministic with the seeded source; a private model no better than
	// the majority class (63% benign) would fail.
	if _, err := fmt.Sscan(s[i+len(acc):], &priv); err != nil || priv < 0.75 {
		t.Errorf("private test accuracy %v (%v), want >= 0.75", priv, err)
	}
	for _, want := range []string{"are 1-differentially private (pure DP)", "Mechanism: gamma", "route: strongly-convex-sgd", "seeded: not for release", "fitted on the training split"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}
