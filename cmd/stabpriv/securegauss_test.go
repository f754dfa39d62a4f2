package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/perturb"
)

// graphSecureRelease writes a release of a program's own Gorgonia graph
// with secure noise and returns its path; nil but in a build with -tags
// graph (graphdpsgd_test.go), which links Gorgonia.
var graphSecureRelease func(*testing.T) string

// TestCLISecureGaussian trains with secure Gaussian noise (output
// perturbation, analytic calibration, DP-SGD, and a graph's DP-SGD):
// certify verifies each (exit 0); the certificate names the exact sampler;
// the weights of the output perturbation lie on its lattice; a file of the
// releases before the exact sampler (its note in place of the new one)
// still verifies, and a note edited otherwise does not (exit 5).
func TestCLISecureGaussian(t *testing.T) {
	train := func(mechanism string) func(*testing.T) string {
		return func(t *testing.T) string {
			path := filepath.Join(t.TempDir(), "m.json")
			if _, _, err := call(t, "train", "--mechanism", mechanism, "--epsilon", "1", "--delta", "1e-6", "--out", path); err != nil {
				t.Fatal(err)
			}
			return path
		}
	}
	for _, tc := range []struct {
		name string
		make func(*testing.T) string
		note string
	}{
		{"gaussian-analytic", train("gaussian-analytic"), perturb.SecureGaussianNote},
		{"dp-sgd", train("dp-sgd"), perturb.SecureDPSGDNote},
		{"graph dp-sgd", graphSecureRelease, perturb.SecureDPSGDNote},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.make == nil {
				t.Skip("a graph's release needs Gorgonia: run with -tags graph (make test does)")
			}
			path := tc.make(t)
			if _, _, err := call(t, "certify", path); exitCode(err) != 0 {
				t.Fatalf("certify: exit %d (%v), want 0", exitCode(err), err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var f struct {
				Model       struct{ W []float64 }
				Certificate struct {
					NoiseScale  float64 `json:"noise_scale"`
					Source      string
					Assumptions []string `json:"not_covered"`
				}
			}
			if err := json.Unmarshal(b, &f); err != nil {
				t.Fatal(err)
			}
			if f.Certificate.Source != perturb.SourceSecure || !slices.Contains(f.Certificate.Assumptions, tc.note) {
				t.Fatalf("source %q, assumptions %q: want the exact sampler's note", f.Certificate.Source, f.Certificate.Assumptions)
			}
			if tc.name == "gaussian-analytic" {
				step := perturb.SecureGaussianLattice(f.Certificate.NoiseScale)
				for _, w := range f.Model.W {
					if q := w / step; q != math.Trunc(q) {
						t.Errorf("weight %v is off the lattice of step %v", w, step)
					}
				}
			}
			var then string
			for _, fn := range perturb.FormerNotes {
				if fn.Now == tc.note {
					then = fn.Then
				}
			}
			for _, c := range []struct {
				to   string
				code int
			}{{then, 0}, {strings.Replace(tc.note, "exact", "precise", 1), 5}} {
				p := writeFile(t, "m.json", strings.Replace(string(b), tc.note, c.to, 1))
				if _, _, err := call(t, "certify", p); exitCode(err) != c.code {
					t.Errorf("the note %.60q...: certify exit %d (%v), want %d", c.to, exitCode(err), err, c.code)
				}
			}
		})
	}
}
