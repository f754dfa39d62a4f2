package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/privbounds"
)

// TestCLICentreStepMatchesPreprocessing certifies edited copies of two
// secure releases with estimated centres, one with --pca (a declared
// categorical column) and one without (a hashed text column): the
// centres' step must be the words of what the file's preprocessing says
// happened. The --pca file verifies in today's words
// (privbounds.CentreStepPCA) and in the earlier ones (CentreStep); it is
// refused (exit 5) with the other fit's words, an edited eps, or text read
// as missing or hashed (which --pca never does, whatever the step says),
// and the file without --pca is refused with the --pca words.
func TestCLICentreStepMatchesPreprocessing(t *testing.T) {
	text := writeCSV(t, editCSV(t, textTable(1500), 5, func(rec []string) []string { rec[1] = "5"; return rec }))
	schema := writeFile(t, "schema.csv", "city,Oslo,Rome,Lima,Pune,Kobe,Bonn\n")
	train := func(args ...string) string {
		out := filepath.Join(t.TempDir(), "m.json")
		args = append([]string{"train", "--data", text, "--label", "class", "--classes", "c0,c1", "--epsilon", "1", "--delta", "1e-5", "--bounds-share", "0.5", "--log-level", "error", "--out", out}, args...)
		if _, stderr, err := call(t, args...); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		return out
	}
	pca, plain := train("--pca", "2", "--schema", schema), train()
	step := func(s string) func(r *modelfile.Released) {
		return func(r *modelfile.Released) { r.Certificate.Ledger[0].Step = s }
	}
	// textRead reads text cells as missing and hashes city into as many
	// buckets as it has categories (the directions keep their shape), in
	// the words of step.
	textRead := func(s string, hashed bool) func(r *modelfile.Released) {
		return func(r *modelfile.Released) {
			p := r.Preprocessing
			p.Text = true
			if hashed {
				p.Categories = []datasets.Categorical{datasets.Hashed("city", len(p.Categories[0].Values))}
			}
			p.Words = p.Explain()
			step(s)(r)
		}
	}
	const textWords = "a fit with them reads every column as numbers"
	for _, c := range []struct {
		name, file string
		edit       func(r *modelfile.Released)
		want       int
		says       string
	}{
		{"--pca as written", pca, func(*modelfile.Released) {}, 0, ""},
		{"--pca in the earlier words", pca, step(privbounds.CentreStep), 0, ""},
		{"--pca, the step's eps halved", pca, func(r *modelfile.Released) { r.Certificate.Ledger[0].Epsilon /= 2 }, 5, "lambda"},
		{"--pca, the step's eps one part in 1e7 higher (earlier words)", pca, func(r *modelfile.Released) {
			step(privbounds.CentreStep)(r)
			r.Certificate.Ledger[0].Epsilon *= 1 + 1e-7
		}, 5, "add up to more than the claim"},
		{"--pca, a step with a trailing space", pca, step(privbounds.CentreStepPCA + " "), 5, "certificate.ledger"},
		{"--pca, text cells read as missing", pca, textRead(privbounds.CentreStepPCA, false), 5, textWords},
		{"--pca, city hashed", pca, textRead(privbounds.CentreStepPCA, true), 5, textWords},
		{"--pca, city hashed, earlier words", pca, textRead(privbounds.CentreStep, true), 5, textWords},
		{"no --pca as written", plain, func(*modelfile.Released) {}, 0, ""},
		{"no --pca, the --pca words", plain, step(privbounds.CentreStepPCA), 5, "certificate.ledger"},
		{"no --pca, the first centres' words (text hashed)", plain, step(privbounds.CentreStepV1), 5, "certificate.ledger"},
	} {
		err := certifyForged(t, c.file, c.edit)
		if exitCode(err) != c.want || !strings.Contains(fmt.Sprint(err), c.says) {
			t.Errorf("%s: exit %d (%v), want %d naming %q", c.name, exitCode(err), err, c.want, c.says)
		}
	}
}
