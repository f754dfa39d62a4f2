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
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/stability"
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
	// report is the stability analysis of run.
	report *stability.Report
	// private, cert and the metrics of private are set by a release.
	private             *trainer.Model
	cert                *perturb.Certificate
	privTrain, privTest metricValue
}

// modelFormat names the format of the model files train writes.
const modelFormat = "stabpriv-model/1"

// modelFile is the JSON document written by train --out. A private model
// file holds the released weights and their certificate, never the trained
// weights; its run record omits the statistics of the trained weights.
type modelFile struct {
	Format string `json:"format"`
	// Private reports whether Model holds released weights backed by
	// Certificate; false for --mechanism none.
	Private     bool                 `json:"private"`
	Model       *trainer.Model       `json:"model"`
	Certificate *perturb.Certificate `json:"certificate,omitempty"`
	// Stability is the analysis of the run: every route and the chosen one.
	Stability     *stability.Report `json:"stability,omitempty"`
	Run           *trainer.Run      `json:"run"`
	Preprocessing preprocessing     `json:"preprocessing"`
	Metrics       metrics           `json:"metrics"`
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
	row("kappa", g(run.Kappa), fmt.Sprintf("row bound ||x|| <= kappa, enforced (%d rows clipped by the trainer)", run.Stats.ClippedRows))
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
	row("passes done", strconv.Itoa(run.Stats.PassesDone), "")
	row("objective", g(run.Stats.Objective), "F_S(w) on the training split")
	row("grad norm", g(run.Stats.GradNorm), "minimum-norm subgradient of F_S at w")
	row("time", run.Stats.Duration.String(), "")
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nnotes:")
	for _, n := range r.train.Notes {
		fmt.Fprintf(w, "  - %s\n", n)
	}
	return nil
}

// printStability writes beta, Delta, the chosen route and every route with
// its bound or the reason it does not apply.
func (r *result) printStability(w io.Writer) error {
	rep := r.report
	fmt.Fprintf(w, "\nstability (neighbours: %s):\n", rep.Neighbours)
	if rep.Chosen == 0 {
		fmt.Fprintln(w, "  no route applies: the trained weights have no sensitivity bound and cannot be released privately")
	} else {
		fmt.Fprintf(w, "  beta  = %.6g  uniform stability in the loss (beta = L*Delta)\n", rep.Beta)
		fmt.Fprintf(w, "  Delta = %.6g  L2 sensitivity of the weights, route %v\n", rep.Delta, rep.Chosen)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  route\tDelta\tbeta\tbound, or why the route does not apply")
	for _, e := range rep.Routes {
		if !e.Applies {
			fmt.Fprintf(tw, "  %v\t-\t-\tnot applicable: %s\n", e.Route, e.Reason)
			continue
		}
		mark := ""
		if e.Route == rep.Chosen {
			mark = " (chosen)"
		}
		fmt.Fprintf(tw, "  %v%s\t%.6g\t%.6g\t%s\n", e.Route, mark, e.Delta, e.Beta, e.Formula)
	}
	return tw.Flush()
}

// printRelease writes the privacy claim of the release and the quality of
// the private model beside the trained one.
func (r *result) printRelease(w io.Writer, s *settings) error {
	c := r.cert
	claim := fmt.Sprintf("%g-DP (pure)", c.Epsilon)
	if c.Delta > 0 {
		claim = fmt.Sprintf("(%g, %g)-DP", c.Epsilon, c.Delta)
	}
	source := c.Source
	if s.noise == "seeded" {
		source = fmt.Sprintf("%s (seed %d)", c.Source, s.seed)
	}
	fmt.Fprintf(w, "\nprivate release (%s, replace-one neighbours of the training rows after preprocessing):\n", claim)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	row := func(name, value string) { fmt.Fprintf(tw, "  %s\t%s\n", name, value) }
	row("mechanism", string(c.Mechanism))
	row("epsilon", strconv.FormatFloat(c.Epsilon, 'g', -1, 64))
	row("delta", strconv.FormatFloat(c.Delta, 'g', -1, 64))
	row("sensitivity", fmt.Sprintf("L2 = %.6g (L1 = %.6g), route %s", c.L2Sensitivity, c.L1Sensitivity, c.SensitivityRoute))
	row("noise scale", fmt.Sprintf("%s = %.6g", c.NoiseScaleName, c.NoiseScale))
	row("noise source", source)
	if err := tw.Flush(); err != nil {
		return err
	}
	name := r.testMetric.Name
	fmt.Fprintf(w, "test %s of the private model: %.4f, train %s: %.4f\n", name, r.privTest.Value, name, r.privTrain.Value)
	fmt.Fprintln(w, "not covered by the guarantee, for your eyes only (do not publish): the standardization statistics,")
	fmt.Fprintln(w, "the metrics and objective of the trained weights above, and these metrics computed in the clear")
	if s.standardize == "train" {
		fmt.Fprintln(w, "the claim holds for the standardized rows: the standardization fitted on the training split is not private (--standardize none avoids it for data on a public scale)")
	}
	return nil
}

// write writes the model file to path, creating its parent directories:
// the private model and its certificate after a release, else the trained
// model, marked as not private.
func (r *result) write(path string) error {
	doc := modelFile{
		Format:    modelFormat,
		Model:     r.model,
		Stability: r.report,
		Run:       r.run,
		Preprocessing: preprocessing{
			Data: r.source, Label: r.label,
			Features: r.train.Features, Classes: r.train.Classes,
			Standardizer: r.std, Map: preprocessMap,
			TestFrac: r.testFrac, SplitSeed: r.run.Seed, Stratified: r.train.Classes != nil,
		},
		Metrics: metrics{Train: r.trainMetric, Test: r.testMetric},
		Notes:   append([]string(nil), r.train.Notes...),
	}
	if r.cert != nil {
		doc.Private, doc.Model, doc.Certificate, doc.Run = true, r.private, r.cert, r.cert.Run
		doc.Metrics = metrics{Train: r.privTrain, Test: r.privTest}
		doc.Notes = append(doc.Notes,
			"model holds the released weights; the trained weights are not written",
			"the metrics of the released model are computed in the clear on the training and test splits and are not covered by the certificate")
	} else {
		doc.Notes = append(doc.Notes, "not private: trained with --mechanism none; the weights are released as trained, without a privacy guarantee")
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
