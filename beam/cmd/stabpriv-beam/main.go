// Command stabpriv-beam is the partitioned form of `stabpriv train` on
// Apache Beam: it reads CSV shards (--input GLOB), trains --partitions
// partitions of their rows, releases the weighted average of the
// partitions' weights once with calibrated noise, and writes the model file
// (stabpriv-model/2) that `stabpriv certify` checks.
//
// The pipeline runs on the embedded runner by default (--runner direct) and
// unchanged on Flink, Spark or Dataflow with Beam's usual pipeline options
// (--runner flink --endpoint HOST:PORT --environment_type ..., --runner
// dataflow --project P --region R --temp_location gs://..., ...). See the
// README section "Distributed training (Apache Beam)".
//
// Usage:
//
//	stabpriv-beam --input 'shards/*.csv' --label y --classes neg,pos --bounds bounds.csv \
//	    --mechanism gamma --epsilon 1 --partitions 8 --out model.json
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx" // registers every runner
	"github.com/sirupsen/logrus"

	stabbeam "github.com/stabpriv/stabpriv/beam"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
)

// beamFlags are the flags registered before this command's (Beam's
// pipeline options): package variables are initialized in declaration
// order, after the imported packages.
var beamFlags = func() map[string]bool {
	m := map[string]bool{}
	flag.VisitAll(func(f *flag.Flag) { m[f.Name] = true })
	return m
}()

var (
	input      = flag.String("input", "", "`glob` of the CSV shards (a local pattern or a URL such as gs://bucket/dir/*.csv), each with the same header")
	partitions = flag.Int("partitions", 1, "number of partitions `P` (1 <= P <= training rows)")
	out        = flag.String("out", "", "write the model file ("+modelfile.Format+") to this `file` (a local path or a URL); required")
	label      = flag.String("label", "", "label `column`; required")
	classes    = flag.String("classes", "", "the classes, declared: `a,b,...` (binary: the second is +1); required for classification")
	bounds     = flag.String("bounds", "", "CSV `file` of public feature bounds, one line column,lo,hi per feature")
	standard   = flag.String("standardize", "auto", "feature map: auto (bounds with --bounds) or none; a data-fitted standardization is not available")
	loss       = flag.String("loss", "", "loss (default: logistic for 2 classes, softmax for more)")
	lambda     = flag.String("lambda", "auto", "elastic-net strength lambda >= 0, or auto: with --mechanism, chosen with --clip from (n, d, K, eps) alone; 1e-3 without")
	l1Ratio    = flag.String("l1-ratio", "auto", "elastic-net L1 share alpha in [0, 1] (auto: 0 with --mechanism, 0.15 without)")
	clip       = flag.String("clip", "auto", "per-example gradient clipping norm `G` (0: none; auto: the rule's G with --lambda auto, else 0)")
	passes     = flag.Int("passes", 10, "passes k over each partition's rows")
	batch      = flag.Int("batch", 1, "minibatch size b")
	step       = flag.String("step", "auto", "constant step size eta, or auto for 1/beta")
	schedule   = flag.String("schedule", "auto", "step schedule: constant, inverse-t, bounded-inverse-t (auto: bounded-inverse-t for a release with mu > 0, else constant)")
	dropout    = flag.Float64("dropout", 1, "s-dropout fraction `s` in (0, 1] (1: none)")
	radius     = flag.Float64("radius", 0, "project the weights onto ||w|| <= `R` (0: none)")
	average    = flag.Bool("average", false, "return the average of the iterates")
	engine     = flag.String("engine", "native", "gradient engine: native or graph")
	seed       = flag.Uint64("seed", 1, "seed of the partitions, the held-out rows and the trainers (published in the certificate)")
	testFrac   = flag.Float64("test-frac", 0.2, "share of the rows held out (by a seeded hash of their position), in [0, 1)")
	labelBound = flag.Float64("label-bound", 0, "regression: the bound `B` in |y| <= B")
	mechanism  = flag.String("mechanism", "none", "release mechanism: none, laplace, gamma, gaussian, gaussian-analytic")
	epsilon    = flag.Float64("epsilon", 1, "privacy budget `eps` > 0")
	delta      = flag.Float64("delta", 0, "privacy budget `delta` in [0, 1)")
	noise      = flag.String("noise", "secure", "noise source: secure, or seeded from --noise-seed (its certificate says NOT private)")
	noiseSeed  = flag.Uint64("noise-seed", 0, "seed of --noise seeded")
	logLevel   = flag.String("log-level", "warn", "log level on stderr: panic, error, warn, info, debug")
	force      = flag.Bool("force", false, "replace the model file at --out")
)

var _ = flag.Bool("help-beam", false, "list Beam's pipeline options as well")

// checkOut refuses, before the pipeline runs, a local --out that exists and
// is not a regular file, or is a model file (without --force): the release
// at the end of the pipeline must not be lost, nor replace one by surprise.
func checkOut(out string, force bool) error {
	if out == "" || strings.Contains(out, "://") {
		return nil
	}
	if !force && modelfile.IsModelFile(out) {
		return fmt.Errorf("--out %s is a model file; give another path (or --force to replace it)", out)
	}
	if st, err := os.Lstat(out); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("--out %s exists and is not a regular file", out)
	}
	return nil
}

// helpAsked reports whether the command line asks for help.
func helpAsked() bool {
	for _, a := range os.Args[1:] {
		switch strings.TrimLeft(a, "-") {
		case "h", "help":
			return true
		}
	}
	return false
}

func main() {
	flag.Usage = func() {
		all := len(os.Args) > 1 && strings.TrimLeft(os.Args[1], "-") == "help-beam"
		if !helpAsked() && !all {
			// A bad flag: a short message, not hundreds of Beam options.
			fmt.Fprintln(os.Stderr, "Usage: stabpriv-beam --input GLOB --label COL --out FILE [flags]; run stabpriv-beam -help for the flags")
			return
		}
		fmt.Fprintf(os.Stderr, "Usage: stabpriv-beam --input GLOB --label COL --out FILE [flags]\n\n"+
			"Partitioned private training on Apache Beam: every row goes to a partition by a seeded\n"+
			"hash of its position (shard name, row number), each partition is trained on its rows,\n"+
			"the weights are averaged with weights n_p/n and released once with noise calibrated to\n"+
			"the sensitivity of the average (2L/(mu n) on the strongly convex route). --runner\n"+
			"selects the Beam runner (default direct, the embedded runner); Beam's pipeline options\n"+
			"for other runners are accepted (-help-beam lists them).\n\nFlags:\n")
		flag.VisitAll(func(f *flag.Flag) {
			if !all && beamFlags[f.Name] {
				return
			}
			name, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(os.Stderr, "  -%s %s\n    \t%s\n", f.Name, name, usage)
		})
	}
	flag.Parse()
	if f := flag.Lookup("help-beam"); f != nil && f.Value.String() == "true" {
		flag.Usage()
		return
	}
	beam.Init() // on a worker of a distributed runner this runs the worker and exits
	set := make(map[string]bool)
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	cfg, err := config(set)
	if err == nil {
		err = checkOut(*out, *force)
	}
	level, lerr := logrus.ParseLevel(*logLevel)
	if err == nil && lerr != nil {
		err = fmt.Errorf("--log-level: %w", lerr)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "stabpriv-beam: %v (run stabpriv-beam -help for the flags)\n", err)
		os.Exit(2)
	}
	log := logrus.New()
	log.SetOutput(os.Stderr)
	log.SetLevel(level)
	runner := *runners.Runner
	if runner == "" {
		runner = "direct"
	}
	ctx := context.Background()
	log.WithFields(logrus.Fields{"runner": runner, "input": *input, "partitions": cfg.Partitions}).Info("stabpriv-beam: pipeline started")
	if err := stabbeam.Run(ctx, runner, cfg, *input, *out); err != nil {
		fmt.Fprintf(os.Stderr, "stabpriv-beam: %v\n", err)
		os.Exit(1)
	}
	if strings.Contains(*out, "://") {
		fmt.Printf("wrote %s (runner %s, %d partitions)\n", *out, runner, cfg.Partitions)
		return
	}
	r, err := modelfile.ReadFile(*out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "stabpriv-beam: reading back %s: %v\n", *out, err)
		os.Exit(1)
	}
	v, why, err := modelfile.Verify(r)
	if err != nil {
		fmt.Fprintf(os.Stderr, "stabpriv-beam: %s does not verify: %v\n", *out, err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s (runner %s, %d partitions, %d rows, %d training rows)\n", *out, runner, cfg.Partitions, r.Split.Rows, r.Split.TrainRows)
	switch {
	case r.Certificate == nil:
		fmt.Println("not private: " + why)
	case v == modelfile.PrivateRelease:
		c := r.Certificate
		fmt.Printf("private release: %s, eps = %g, delta = %g, L2 sensitivity %.6g (route %s), noise %s = %.6g\n",
			c.Mechanism, c.Epsilon, c.Delta, c.L2Sensitivity, c.SensitivityRoute, c.NoiseScaleName, c.NoiseScale)
	default:
		fmt.Println("NOT PRIVATE: " + why)
	}
}

// config checks the flags and returns the settings, with the automatic
// values of `stabpriv train`.
func config(set map[string]bool) (stabbeam.Config, error) {
	c := stabbeam.Config{Label: *label, Seed: *seed, TestFrac: *testFrac, Partitions: *partitions,
		Loss: *loss, Passes: *passes, Batch: *batch, Dropout: *dropout, Radius: *radius, Average: *average,
		Engine: *engine, LabelBound: *labelBound}
	switch {
	case flag.NArg() > 0:
		return c, fmt.Errorf("unexpected argument %q", flag.Arg(0))
	case *input == "":
		return c, errors.New("--input GLOB is required")
	case *out == "":
		return c, errors.New("--out FILE is required")
	case *label == "":
		return c, errors.New("--label is required")
	case *partitions < 1:
		return c, fmt.Errorf("--partitions %d, want >= 1", *partitions)
	case *passes < 1 || *batch < 1:
		return c, fmt.Errorf("--passes %d, --batch %d, want >= 1", *passes, *batch)
	}
	priv := *mechanism != "none"
	if priv {
		m, err := perturb.ParseMechanism(*mechanism)
		if err != nil {
			return c, fmt.Errorf("--mechanism %q, want none, laplace, gamma, gaussian or gaussian-analytic", *mechanism)
		}
		c.Mechanism, c.Epsilon, c.Delta = string(m), *epsilon, *delta
		switch *noise {
		case "secure":
			if set["noise-seed"] {
				return c, errors.New("--noise-seed applies to --noise seeded")
			}
		case "seeded":
			if !set["noise-seed"] {
				return c, errors.New("--noise seeded needs --noise-seed N")
			}
			c.Noise, c.NoiseSeed = "seeded", *noiseSeed
		default:
			return c, fmt.Errorf("--noise %q, want secure or seeded", *noise)
		}
	} else {
		for _, name := range []string{"epsilon", "delta", "noise", "noise-seed"} {
			if set[name] {
				return c, fmt.Errorf("--%s applies to a private release; choose a --mechanism", name)
			}
		}
	}
	if *classes != "" {
		for _, s := range strings.Split(*classes, ",") {
			c.Classes = append(c.Classes, strings.TrimSpace(s))
		}
	}
	if *bounds != "" {
		b, err := datasets.ReadBoundsFile(*bounds)
		if err != nil {
			return c, fmt.Errorf("--bounds: %w", err)
		}
		c.Bounds = b
	}
	switch *standard {
	case "auto":
		if *bounds == "" {
			return c, errors.New("a partitioned run needs --bounds FILE (public feature bounds) or --standardize none")
		}
	case "none":
		if *bounds != "" {
			return c, errors.New("--bounds and --standardize none exclude each other")
		}
		c.Preprocess = "none"
	default:
		return c, fmt.Errorf("--standardize %q, want auto or none (a standardization fitted on the rows is not available: standardize the shards in a separate step, outside the guarantee)", *standard)
	}
	num := func(name, v string, lo, hi float64) (float64, bool, error) {
		if v == "auto" {
			return 0, true, nil
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || x < lo || x > hi {
			return 0, false, fmt.Errorf("--%s %q, want auto or a number in [%g, %g]", name, v, lo, hi)
		}
		return x, false, nil
	}
	lam, autoLam, err := num("lambda", *lambda, 0, math.MaxFloat64)
	if err != nil {
		return c, err
	}
	alpha, autoAlpha, err := num("l1-ratio", *l1Ratio, 0, 1)
	if err != nil {
		return c, err
	}
	g, autoClip, err := num("clip", *clip, 0, math.MaxFloat64)
	if err != nil {
		return c, err
	}
	if autoLam && !priv {
		lam = 1e-3
	}
	if autoAlpha && !priv {
		alpha = 0.15
	}
	c.Auto = priv && autoLam
	if c.Auto {
		for _, name := range []string{"clip", "l1-ratio", "schedule", "step"} {
			if set[name] {
				return c, fmt.Errorf("--%s: with --lambda auto the release chooses lambda, --clip, --l1-ratio 0 and the schedule itself; give --lambda to set them", name)
			}
		}
	} else if autoClip {
		g = 0
	}
	c.Lambda, c.L1Ratio, c.Clip = lam, alpha, g
	switch *schedule {
	case "auto":
		c.Schedule = "constant"
		if priv && *step == "auto" && lam*(1-alpha) > 0 {
			c.Schedule = "bounded-inverse-t"
		}
	case "constant", "inverse-t", "bounded-inverse-t":
		c.Schedule = *schedule
	default:
		return c, fmt.Errorf("--schedule %q, want auto, constant, inverse-t or bounded-inverse-t", *schedule)
	}
	if *step != "auto" {
		eta, err := strconv.ParseFloat(*step, 64)
		if err != nil || math.IsNaN(eta) || math.IsInf(eta, 0) || eta <= 0 {
			return c, fmt.Errorf("--step %q, want auto or a finite number > 0", *step)
		}
		if c.Schedule != "constant" {
			return c, fmt.Errorf("--step applies to the constant schedule, not %s", c.Schedule)
		}
		c.Eta = eta
	}
	if priv && c.Classes == nil && (*loss == "" || !isRegression(*loss)) {
		return c, errors.New("--classes a,b,... must be declared in advance")
	}
	return c, nil
}

func isRegression(name string) bool {
	l, err := losses.ByName(name)
	return err == nil && l.Task() == losses.Regression
}
