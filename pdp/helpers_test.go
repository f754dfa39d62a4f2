package pdp

import (
	"testing"

	"gonum.org/v1/gonum/mat"
)

func mustAnalysis(t testing.TB, x *mat.Dense, y []float64, cfg Config) *Analysis {
	t.Helper()
	a, err := New(x, y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
