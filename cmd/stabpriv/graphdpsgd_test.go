//go:build graph

// A program's own Gorgonia graph: built with -tags graph (make test runs
// TestCertifyGraphDPSGD and TestCLISecureGaussian's graph case there), so
// that the command's default test binary, and the fuzz build of
// FuzzCommandLine that instruments every package it links, hold no
// Gorgonia, tensor, protobuf or Arrow (about 45 CPU-s of make test).

package main

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/graph"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
)

func init() {
	graphSecureRelease = func(t *testing.T) string { return graphRelease(t, nil) }
}

// graphRelease trains a Go program's own Gorgonia graph (the logistic
// loss of <w, x>, 3 inputs) by DP-SGD on 200 rows, with noise from src,
// and writes its release file (modelfile.GraphRelease), whose path it
// returns.
func graphRelease(t *testing.T, src perturb.Source) string {
	t.Helper()
	g := gorgonia.NewGraph()
	w := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("w"), gorgonia.WithInit(gorgonia.Zeroes()))
	x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("x"))
	y := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("y"))
	loss, err := graph.Expr(losses.Logistic{}, gorgonia.Must(gorgonia.Mul(x, w)), y)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(4, 5))
	X := mat.NewDense(200, 3, nil)
	labels := make([]float64, 200)
	for i := range labels {
		labels[i] = float64(2*(i%2) - 1)
		X.SetRow(i, []float64{0.3*labels[i] + 0.2*r.NormFloat64(), 0.2 * r.NormFloat64(), 0.5})
	}
	res, err := graph.TrainDPSGD(context.Background(), graph.DPSGD{
		Model:   &graph.Model{Graph: g, Params: []*gorgonia.Node{w}, Input: x, Label: y, Loss: loss},
		Epsilon: 1, Delta: 1e-5, Clip: 0.5, Batch: 20, Passes: 3, Eta: 0.5,
		Noise: src, Notes: []string{"rows: synthetic, drawn by the test"},
	}, X, labels)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "graph.json")
	if err := (&modelfile.GraphRelease{Model: res.Model, Certificate: res.Certificate}).WriteFile(path, false); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCertifyGraphDPSGD checks the route of a graph's DP-SGD release to
// certify: the file that modelfile.GraphRelease writes verifies
// (exit 3 with seeded noise, exit 0 with the secure source), its eps and
// noise multiplier rebuilt by the accountant from the file; a file with
// an edited noise multiplier, step count, sample rate (b/n not rounded
// down), clipping norm, claim, parameter, or without one of the graph's
// notes is refused (exit 5), naming the field; an edited note of the
// program's own still verifies (it is taken as written, as certify says).
func TestCertifyGraphDPSGD(t *testing.T) {
	path := graphRelease(t, perturb.Seeded(3))
	stdout, _, err := call(t, "certify", path)
	if code := exitCode(err); code != 3 || !strings.Contains(stdout, "NOT A PRIVATE RELEASE: the noise was drawn from a seeded generator") ||
		!strings.Contains(stdout, "the notes the program added") || !strings.Contains(stdout, "user-graph loss") {
		t.Fatalf("certify of a seeded graph release: exit %d (%v)\n%s", code, err, stdout)
	}
	if stdout, _, err := call(t, "certify", graphRelease(t, nil)); exitCode(err) != 0 || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Errorf("certify of a secure graph release: exit %d (%v)\n%s", exitCode(err), err, stdout)
	}
	for _, tc := range []struct {
		name, field string
		edit        func(*modelfile.GraphRelease)
	}{
		{"noise multiplier", "dp_sgd", func(g *modelfile.GraphRelease) { g.Certificate.Run.DPSGD.NoiseMultiplier *= 0.9 }},
		{"steps", "dp_sgd", func(g *modelfile.GraphRelease) { g.Certificate.Run.DPSGD.Steps /= 2 }},
		{"sample rate b/n", "dp_sgd", func(g *modelfile.GraphRelease) { g.Certificate.Run.DPSGD.SampleRate = 20.0 / 200 }},
		{"clip", "noise_scale", func(g *modelfile.GraphRelease) { g.Certificate.Run.Clip = 0.25 }},
		{"epsilon", "dp_sgd", func(g *modelfile.GraphRelease) { g.Certificate.Epsilon = 2 }},
		{"parameter", "SHA-256", func(g *modelfile.GraphRelease) { g.Model.W[0] += 1 }},
		{"graph note", "not_covered", func(g *modelfile.GraphRelease) {
			a := g.Certificate.Assumptions
			i := slices.IndexFunc(a, func(s string) bool { return strings.HasPrefix(s, "the program's graph is trusted") })
			g.Certificate.Assumptions = slices.Delete(a, i, i+1)
		}},
	} {
		g, err := modelfile.ReadGraphFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tc.edit(g)
		edited := filepath.Join(t.TempDir(), "edited.json")
		if err := g.WriteFile(edited, false); err != nil {
			t.Fatal(err)
		}
		_, _, err = call(t, "certify", edited)
		if code := exitCode(err); code != 5 || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("edited %s: certify exit %d (%v), want 5 naming %s", tc.name, code, err, tc.field)
		}
	}
	g, err := modelfile.ReadGraphFile(path)
	if err != nil {
		t.Fatal(err)
	}
	last := len(g.Certificate.Assumptions) - 1
	g.Certificate.Assumptions[last] = "rows: another note of the program's"
	own := filepath.Join(t.TempDir(), "own.json")
	if err := g.WriteFile(own, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := call(t, "certify", own); exitCode(err) != 3 {
		t.Errorf("an edited note of the program's own: certify exit %d (%v), want 3", exitCode(err), err)
	}
	// A field beyond the format is refused as it is read.
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data := strings.Replace(string(orig), `"model": {`, `"extra": 1, "model": {`, 1)
	if _, _, err := call(t, "certify", writeFile(t, "extra.json", data)); exitCode(err) != 5 {
		t.Errorf("a field beyond the format: certify exit %d (%v), want 5", exitCode(err), err)
	}
}
