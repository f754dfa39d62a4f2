// Command stabpriv-beam is the partitioned form of `stabpriv train` on
// Apache Beam: it reads CSV shards (--data GLOB), trains --partitions
// partitions of their rows, releases the weighted average of the
// partitions' weights once with calibrated noise, and writes the model file
// (stabpriv-model/2) that `stabpriv certify` checks.
//
// The pipeline runs on prism, the SDK's embedded portable runner, by default
// (--runner prism; --runner direct is the older embedded runner) and
// unchanged on Flink, Spark or Dataflow with Beam's usual pipeline options
// (--runner flink --endpoint HOST:PORT --environment_type ..., --runner
// dataflow --project P --region R --temp_location gs://..., ...). See the
// README section "Distributed training (Apache Beam)".
//
// Usage:
//
//	stabpriv-beam --data 'shards/*.csv' --label y --classes neg,pos --bounds bounds.csv \
//	    --mechanism gamma --epsilon 1 --partitions 8 --out model.json
//
// Without --mechanism, a budget (--epsilon, and --delta) releases by the
// public rule of a partitioned fit (partition.RuleMechanism): gamma for a
// pure budget, the analytic Gaussian with --delta, at their automatic
// knobs, the model that naming that mechanism gives.
//
// Exit codes, those of stabpriv train for the same error, wherever it is
// found (at launch or in the pipeline; the table "Exit statuses" in
// docs/GUIDE.md): 0 on success; 1 for a run that failed otherwise (a worker
// lost, an error writing); 2 for a usage error (a bad flag or value,
// settings the data refuses such as a missing privacy-ID column or more
// partitions than training rows, a file among the shards that is not CSV,
// an output location that is refused, a local model file that another run
// wrote meanwhile); 4 for input data that is missing or malformed (no
// shard, a shard with another header or a header alone, a ragged row, a
// cell that is neither a number nor missing, a CSV syntax error); 128 plus
// the signal's number when stopped by SIGINT, SIGTERM or SIGHUP
// (internal/interrupt). A runner that reports a failed job without the
// worker's error gives 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	// The runners the command offers (linkedRunners), registered by their
	// imports: not beamx, which adds the dot runner and the SDK's
	// reflection-optimized callers (about 7 CPU-s of a cold worker build)
	// that the pipeline's registered functions do not use.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/direct"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"
	"github.com/sirupsen/logrus"

	stabbeam "github.com/stabpriv/stabpriv/beam"
	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/internal/interrupt"
	"github.com/stabpriv/stabpriv/internal/safefile"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/partition"
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
	data = flag.String("data", "", "`glob` of the CSV shards (a local pattern or a URL such as gs://bucket/dir/dt=*/part-*.csv or s3://bucket/dir/*.csv), each with the same header, as stabpriv train's --data; a shard's name is its path relative to the input root (the directories before the first wildcard)")
	// input is the old name of --data, still accepted with a warning.
	input = flag.String("input", "", "deprecated: the old name of --data")
	out   = flag.String("out", "", "write the model file ("+modelfile.Format+") to this `file` (a local path or a URL); required")
	force = flag.Bool("force", false, "replace the model file at --out")
	// The flags shared with stabpriv train, but those Beam's SDK defines
	// itself: --project is the Google Cloud project here (gcpopts), so
	// train's random projection (--project k) is not available.
	shared = func() *runflags.Flags {
		f := new(runflags.Flags)
		fs := flag.NewFlagSet("shared", flag.ContinueOnError)
		f.Register(fs)
		fs.VisitAll(func(fl *flag.Flag) {
			if notPartitioned[fl.Name] {
				return
			}
			if flag.CommandLine.Lookup(fl.Name) == nil {
				flag.CommandLine.Var(fl.Value, fl.Name, fl.Usage)
			}
		})
		return f
	}()
)

// linkedRunners are the values of --runner, the runners imported above.
var linkedRunners = []string{"prism", "direct", "universal", "flink", "spark", "dataflow"}

// notPartitioned are train's flags that a partitioned fit never accepts
// (a private selection, the private bounds estimate, the private principal
// components): not offered here.
var notPartitioned = map[string]bool{"select": true, "bounds-share": true, "pca": true, "pca-share": true}

var _ = flag.Bool("help-beam", false, "list Beam's pipeline options as well")

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
			fmt.Fprintln(os.Stderr, "Usage: stabpriv-beam --data GLOB --label COL --out FILE [flags]; run stabpriv-beam -help for the flags")
			return
		}
		fmt.Fprintf(os.Stderr, "Usage: stabpriv-beam --data GLOB --label COL --out FILE [flags]\n\n"+
			"Partitioned private training on Apache Beam: every row goes to a partition by a seeded\n"+
			"hash of its position (the shard's path relative to the input root, the row number),\n"+
			"each partition is trained on its rows,\n"+
			"the weights are averaged with weights n_p/n and released once with noise calibrated to\n"+
			"the sensitivity of the average (2L/(mu n) on the strongly convex route). Without\n"+
			"--mechanism, --epsilon (and --delta) release by the public rule: gamma for a pure\n"+
			"budget, the analytic Gaussian with --delta, at their automatic knobs. --runner\n"+
			"selects the Beam runner (default prism, the SDK's embedded portable runner); Beam's pipeline options\n"+
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
	cfg, level, err := config(set)
	if err != nil {
		fmt.Fprintf(os.Stderr, "stabpriv-beam: %v (run stabpriv-beam -help for the flags)\n", err)
		os.Exit(2)
	}
	log := logrus.New()
	log.SetOutput(os.Stderr)
	log.SetLevel(level)
	beamlog.SetLogger(beamLogger{log})
	// prism logs through log/slog: at the command's level too.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slogLevel(level)})))
	runner := *runners.Runner
	if runner == "" {
		runner = "prism"
	}
	ctx := interrupt.Context(context.Background(), "stabpriv-beam", os.Stderr)
	// The files the flags read besides the shards are inputs too: --out
	// never replaces them (Launch checks the shards).
	if err := stabbeam.CheckOutput(ctx, *out, *force, shared.Bounds, shared.Categories); err != nil {
		fmt.Fprintf(os.Stderr, "stabpriv-beam: %v\n", err)
		os.Exit(2)
	}
	log.WithFields(logrus.Fields{"runner": runner, "data": *data, "partitions": cfg.Partitions}).Info("stabpriv-beam: pipeline started")
	if err := stabbeam.Run(ctx, runner, cfg, *data, *out, *force); err != nil {
		var stop *interrupt.Error
		if errors.As(context.Cause(ctx), &stop) {
			// Stopped by a signal: whatever the pipeline returned, the
			// cause is the signal.
			fmt.Fprintf(os.Stderr, "stabpriv-beam: %v, nothing written\n", stop)
			os.Exit(stop.Status())
		}
		fmt.Fprintf(os.Stderr, "stabpriv-beam: %v\n", err)
		os.Exit(exitCode(err))
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

// exitCode maps an error of stabbeam.Run to the exit status, by the table
// of stabpriv train for the same errors, wherever they are found (at
// launch, before anything ran, or in the pipeline): 2 for a usage error (a
// file among the shards that is not CSV at all, settings that the data
// refuses, such as a missing privacy-ID column or more partitions than
// rows, an output location that is refused, any other refusal at launch);
// 4 for input data that is missing or malformed (no shard, a ragged row, a
// cell that is neither a number nor missing, a CSV syntax error, a shard with
// another header or with a header alone); 1 for a pipeline that failed
// otherwise. A refused local model file (safefile.ErrTarget: another run
// wrote it meanwhile) is 2, as the same refusal before the run is.
func exitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, partition.ErrNotShard), runflags.IsSettingsError(err), errors.Is(err, stabbeam.ErrOutput),
		errors.Is(err, safefile.ErrTarget):
		return 2
	case errors.Is(err, datasets.ErrFormat), errors.Is(err, fs.ErrNotExist):
		return 4
	case errors.Is(err, stabbeam.ErrLaunch), errors.Is(err, stabbeam.ErrInput):
		return 2
	}
	return 1
}

// config checks the flags and returns the pipeline's configuration, and
// the log level.
func config(set map[string]bool) (stabbeam.Config, logrus.Level, error) {
	switch {
	case flag.NArg() > 0:
		return stabbeam.Config{}, 0, fmt.Errorf("unexpected argument %q", flag.Arg(0))
	case set["input"] && set["data"] && *input != *data:
		return stabbeam.Config{}, 0, errors.New("--input is the old name of --data: give --data alone")
	case set["input"]:
		*data = *input
		fmt.Fprintln(os.Stderr, "stabpriv-beam: warning: --input is deprecated; use --data (the name stabpriv train uses)")
	}
	switch {
	case *data == "":
		return stabbeam.Config{}, 0, errors.New("--data GLOB is required")
	case *out == "":
		return stabbeam.Config{}, 0, errors.New("--out FILE is required")
	case *runners.Runner != "" && !slices.Contains(linkedRunners, *runners.Runner):
		return stabbeam.Config{}, 0, fmt.Errorf("--runner %s: not a runner of this command; use one of %s",
			*runners.Runner, strings.Join(linkedRunners, ", "))
	}
	run, err := shared.Check(set, nil)
	if err != nil {
		return stabbeam.Config{}, 0, err
	}
	if err := shared.CheckEngine(graphEngine); err != nil {
		return stabbeam.Config{}, 0, err
	}
	if run.Options.Preprocess == preprocess.Standardize {
		// Standardize the shards in a separate step, outside the
		// guarantee, if need be.
		return stabbeam.Config{}, 0, errors.New("--standardize train fits statistics on every partition's rows: give --bounds or --standardize none")
	}
	if run.Options.Preprocess == "" && run.Schema.Bounds == nil && run.Schema.All == nil {
		return stabbeam.Config{}, 0, errors.New("a partitioned run needs public feature bounds (--bounds FILE or --bounds-all lo,hi) or --standardize none")
	}
	c, err := stabbeam.NewConfig(run.Schema, run.Budget, run.Options, shared.Partitions)
	return c, run.Level, err
}

// slogLevel maps a logrus level to log/slog's.
func slogLevel(l logrus.Level) slog.Level {
	switch {
	case l >= logrus.DebugLevel:
		return slog.LevelDebug
	case l == logrus.InfoLevel:
		return slog.LevelInfo
	case l == logrus.WarnLevel:
		return slog.LevelWarn
	}
	return slog.LevelError
}

// beamLogger writes Beam's own log through logrus. Beam's info lines (the
// pipeline's plan, runner progress) go out at debug level: the command's
// own progress is at info.
type beamLogger struct{ log *logrus.Logger }

// Log implements beamlog.Logger.
func (b beamLogger) Log(_ context.Context, sev beamlog.Severity, _ int, msg string) {
	msg = strings.TrimSpace(msg)
	switch {
	case sev >= beamlog.SevError:
		b.log.Error("beam: " + msg)
	case sev == beamlog.SevWarn:
		b.log.Warn("beam: " + msg)
	default:
		b.log.Debug("beam: " + msg)
	}
}
