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
	if err := run(&out, nil, 0); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	var delta float64
	if _, err := fmt.Sscanf(s, "route strongly-convex-sgd: Delta = %f", &delta); err != nil || delta <= 0 {
		t.Errorf("Delta %v (%v):\n%s", delta, err, s)
	}
	for _, want := range []string{"are 1-differentially private (pure DP)", "Mechanism: gamma", "Noise source: secure", "declared bounds", "sampled exactly"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	out.Reset()
	if err := run(&out, perturb.Seeded(3), 3); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "NOT PRIVATE") {
		t.Errorf("a seeded release does not say it is not private:\n%s", out.String())
	}
}
