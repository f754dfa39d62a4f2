package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/trainer"
)

// preprocessMap describes, for a model file, how a raw row becomes the row
// the model was trained on.
const preprocessMap = "z = (x - mean) / scale; x' = [clip_1(z), 1] / sqrt(2), " +
	"clip_1 scaling a row of norm above 1 to norm 1; ||x'|| <= 1"

// result is what the train command reports and writes.
type result struct {
	source, label           string
	model                   *trainer.Model
	run                     *trainer.Run
	std                     *datasets.Standardizer
	train, test             *datasets.Dataset
	trainMetric, testMetric metricValue
	testFrac                float64
}

// modelFile is the JSON document written by train --out.
type modelFile struct {
	Format        string         `json:"format"`
	Model         *trainer.Model `json:"model"`
	Run           *trainer.Run   `json:"run"`
	Preprocessing preprocessing  `json:"preprocessing"`
	Metrics       metrics        `json:"metrics"`
	// Notes are the assumptions a certificate must list.
	Notes []string `json:"notes"`
}

type metrics struct {
	Train metricValue `json:"train"`
	Test  metricValue `json:"test"`
}

// preprocessing is everything needed to map a raw row to a model input.
type preprocessing struct {
	Data     string   `json:"data"`
	Label    string   `json:"label"`
	Features []string `json:"features"` // model inputs, the bias last
	Classes  []string `json:"classes,omitempty"`
	// Standardizer holds the means and scales of the raw features, fitted on
	// the training split.
	Standardizer *datasets.Standardizer `json:"standardizer"`
	Map          string                 `json:"map"`
	TestFrac     float64                `json:"test_frac"`
	SplitSeed    uint64                 `json:"split_seed"`
	Stratified   bool                   `json:"stratified"`
}

// print writes the metrics, the constants of the run and the notes.
func (r *result) print(w io.Writer) error {
	run := r.run
	fmt.Fprintf(w, "data:   %s (label %q)\n", r.source, r.label)
	fmt.Fprintf(w, "model:  %s loss, %s task", run.Loss, run.Task)
	if c := r.train.Classes; len(c) == 2 && run.Task == "binary" {
		fmt.Fprintf(w, " (%s = -1, %s = +1)", c[0], c[1])
	} else if len(c) > 0 {
		fmt.Fprintf(w, ", %d classes", len(c))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "train %s: %.4f (%d rows)\n", r.trainMetric.Name, r.trainMetric.Value, r.trainMetric.Rows)
	fmt.Fprintf(w, "test %s:  %.4f (%d rows)\n", r.testMetric.Name, r.testMetric.Value, r.testMetric.Rows)
	fmt.Fprintln(w, "rows were mapped to x' = [x, 1]/sqrt(2) after standardization, so ||x'|| <= 1 and kappa = 1 holds (the bias counts in it)")

	fmt.Fprintln(w, "\nconstants of the run:")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	row := func(name, value, meaning string) { fmt.Fprintf(tw, "  %s\t%s\t%s\n", name, value, meaning) }
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	row("n", strconv.Itoa(run.N), "training examples")
	row("d", strconv.Itoa(run.D), "features, the bias included")
	row("K", strconv.Itoa(run.K), "outputs")
	row("kappa", g(run.Kappa), fmt.Sprintf("row bound ||x|| <= kappa, enforced (%d rows clipped by the trainer)", run.ClippedRows))
	row("L", g(run.L), fmt.Sprintf("Lipschitz constant of the loss in w (L_z = %s times kappa)", g(run.Lz)))
	row("beta_s", g(run.BetaS), fmt.Sprintf("smoothness of the loss in w (S_z = %s times kappa^2)", g(run.Sz)))
	row("mu", g(run.Mu), "strong convexity lambda*(1 - l1_ratio)")
	row("lambda", g(run.Lambda), "elastic-net strength")
	row("l1_ratio", g(run.L1Ratio), "elastic-net L1 share alpha")
	row("eta", g(run.Eta), "step size ("+run.Schedule+" schedule; first step)")
	row("k", strconv.Itoa(run.Passes), "passes asked for")
	row("b", strconv.Itoa(run.Batch), "minibatch size")
	row("G", g(run.Clip), "per-example clipping norm (0: none)")
	row("s", g(run.Dropout), "s-dropout fraction (1: none)")
	row("R", g(run.Radius), "weight projection radius (0: none)")
	row("averaging", strconv.FormatBool(run.Average), "average of the iterates returned")
	row("seed", strconv.FormatUint(run.Seed, 10), "split, permutations and dropout masks")
	row("engine", run.Engine, "gradient engine")
	row("passes done", strconv.Itoa(run.PassesDone), "")
	row("objective", g(run.Objective), "F_S(w) on the training split")
	row("grad norm", g(run.GradNorm), "minimum-norm subgradient of F_S at w")
	row("time", run.Duration.String(), "")
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nnotes:")
	for _, n := range r.train.Notes {
		fmt.Fprintf(w, "  - %s\n", n)
	}
	return nil
}

// write writes the model file to path, creating its parent directories.
func (r *result) write(path string) error {
	doc := modelFile{
		Format: "stabpriv-model/1",
		Model:  r.model,
		Run:    r.run,
		Preprocessing: preprocessing{
			Data: r.source, Label: r.label,
			Features: r.train.Features, Classes: r.train.Classes,
			Standardizer: r.std, Map: preprocessMap,
			TestFrac: r.testFrac, SplitSeed: r.run.Seed, Stratified: r.train.Classes != nil,
		},
		Metrics: metrics{Train: r.trainMetric, Test: r.testMetric},
		Notes:   r.train.Notes,
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the model: %w", err)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
