package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/perturb"
)

// results are the numbers the program prints.
type results struct {
	eps, delta, sigma, q, C float64
	T                       int
	private                 bool
	acc, majority           float64
}

// parse reads the program's dp-sgd and accuracy lines.
func parse(t *testing.T, out string) results {
	t.Helper()
	var r results
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if k, err := fmt.Sscanf(line, "dp-sgd: eps = %g, delta = %g, sigma = %g, q = %g, T = %d, C = %g, private = %t", &r.eps, &r.delta, &r.sigma, &r.q, &r.T, &r.C, &r.private); err == nil {
			n += k
		}
		if k, err := fmt.Sscanf(line, "test accuracy (private): %g (majority class %g)", &r.acc, &r.majority); err == nil {
			n += k
		}
	}
	if n != 9 {
		t.Fatalf("%d numbers read, want 9, in:\n%s", n, out)
	}
	return r
}

func TestGorgoniaMLP(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, perturb.Seeded(1), 1); err != nil {
		t.Fatal(err)
	}
	r := parse(t, out.String())
	// n = 455 training rows, b = 64: q = 64/455, T = 5 ceil(455/64) = 40.
	switch {
	case r.eps != 1 || r.delta != 1e-5 || r.private:
		t.Errorf("eps %v, delta %v, private %v; want 1, 1e-5, false (seeded):\n%s", r.eps, r.delta, r.private, out.String())
	case r.q != 0.1407 || r.T != 40 || r.C != 1 || !(r.sigma > 1):
		t.Errorf("q %v, T %d, C %v, sigma %v; want 0.1407, 40, 1, > 1:\n%s", r.q, r.T, r.C, r.sigma, out.String())
	case !(r.majority > 0.5) || !(r.acc > r.majority):
		t.Errorf("test accuracy %v, majority class %v:\n%s", r.acc, r.majority, out.String())
	}
	if !strings.Contains(out.String(), "529 parameters") {
		t.Errorf("not a 31 -> 16 -> 1 perceptron (529 parameters):\n%s", out.String())
	}

	// The seeded run is reproduced; the program's own run is private.
	var again bytes.Buffer
	if err := run(&again, perturb.Seeded(1), 1); err != nil {
		t.Fatal(err)
	}
	if again.String() != out.String() {
		t.Errorf("a second seeded run printed\n%s\nthe first\n%s", again.String(), out.String())
	}
	out.Reset()
	if err := run(&out, nil, 1); err != nil {
		t.Fatal(err)
	}
	if r := parse(t, out.String()); !r.private {
		t.Errorf("a run with the secure source is not private:\n%s", out.String())
	}
}
