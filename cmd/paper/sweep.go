package paper

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stabpriv/stabpriv/cmd/outfile"
	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/experiments"
	"github.com/stabpriv/stabpriv/experiments/protocol"
)

// outputFiles are the files each paper command writes into --out
// (experiments.WriteSweep, experiments.WriteFeatSel).
var outputFiles = map[string][]string{
	"sweep":   {"results.csv", "summary.json", "fig1.png", "frontier.png", "fig2.png"},
	"featsel": {"featsel.csv", "fig3.png", "fig5.png"},
}

// parsePaper parses and checks the shared flags of sweep and featsel
// (Flags); every error is a usage error. help prints the
// command's help.
func parsePaper(fs *flag.FlagSet, f *Flags, args []string, stderr io.Writer, help string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, help, "\nFlags:\n")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
			return err
		}
		return usagef("%w (run 'stabpriv help %s' for the flags)", err, fs.Name())
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if err := f.checkRun(fs); err != nil {
		return err
	}
	rep := outfile.Keep
	if f.Force {
		rep = outfile.NotModels
	}
	if err := outfile.CheckDir("--out", f.Out, rep, []string{f.Data}, outputFiles[fs.Name()]...); err != nil {
		return err
	}
	return f.checkData()
}

// asUsage turns an experiments.ErrConfig or protocol.ErrConfig error (a
// bad flag value the shared checks did not catch) into a usage error.
func asUsage(err error) error {
	if errors.Is(err, experiments.ErrConfig) || errors.Is(err, protocol.ErrConfig) {
		return &runflags.UsageError{Err: err}
	}
	return err
}

const sweepHelp = `Usage: stabpriv sweep --dataset adult|lastfm|gene_all|csv --out DIR [flags]

Runs the paper's Figure 1 and 2 experiments and the knob sweep: for each split and knob
setting (every lambda with every combination of --l1-ratios, --clips, --dropouts, --batches,
--passes and --average), trains once by permutation SGD (step min(1/beta, 1/(mu t)),
sensitivity by the strongly convex SGD route with the setting's constants), releases the
weights once per eps and mechanism (--mechanism, a list: pure and (eps, delta) mechanisms
side by side) with noise calibrated to that sensitivity (each a separate release), and once
at a fixed noise scale reporting the eps it buys. The training-time mechanisms objective
(pure eps) and amp ((eps, delta)) put the noise in the objective, so they train once per
split, lambda and eps (ridge objective minimized exactly; the knobs do not apply; a lambda
below the mechanism's floor runs at the floor, Chaudhuri et al.'s extra ridge) and are
reported beside the others. With --select-val F, it also selects the
setting and the pure mechanism privately (selection.Select on a validation split of F of the
training rows, inside each eps): the candidates are every setting with gamma or laplace,
and, when objective is listed, objective perturbation at every lambda at or above its
floor at eps_run = eps/(2+eta), the lower ones at that floor once (trained afresh at each
run of the selection). The noise is seeded: the results are reproducible and not
for release.

Writes DIR/results.csv (one row per split, setting, mechanism and eps, plus the selected
releases), DIR/summary.json, DIR/fig1.png (accuracy vs lambda per eps, baseline knobs),
DIR/fig2.png (fixed scale) and DIR/frontier.png (best accuracy vs eps per mechanism, for its
best knob family and lambda alone, with the privately selected releases), and
prints the best mean test accuracy per eps (best setting, chosen on the test accuracy: an
optimistic figure) with its std over the splits, beside the privately selected one.
`

// Sweep is the sweep command of stabpriv: args are its flags; results
// go to stdout, logs and help to stderr.
func Sweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f Flags
	fs := newFlagSet("sweep", &f)
	fs.Float64Var(&f.FixedScale, "fixed-scale", 0, "noise scale `b` of the Figure 2 releases (0: the scale eps = 1 gives at the middle lambda; < 0: skip)")
	var knobs experiments.Knobs
	listVar(fs, &knobs.L1Ratios, "l1-ratios", "comma-separated elastic-net L1 shares in [0, 1) (default: --l1-ratio); the first is the baseline", runflags.Floats)
	listVar(fs, &knobs.Clips, "clips", "comma-separated per-example clipping norms G >= 0, 0 = none (default: 0)", runflags.Floats)
	listVar(fs, &knobs.Dropouts, "dropouts", "comma-separated s-dropout levels s in (0, 1], 1 = none (default: 1)", runflags.Floats)
	listVar(fs, &knobs.Batches, "batches", "comma-separated minibatch sizes >= 1 (default: 1)", runflags.Ints)
	listVar(fs, &knobs.Averages, "average", "comma-separated iterate averaging, false and/or true (default: false)", bools)
	var sel experiments.SelectConfig
	fs.Float64Var(&sel.ValFrac, "select-val", 0, "private selection: share of each split's training rows held out for validation, in (0, 1) (0: no selection)")
	fs.Float64Var(&sel.Eta, "select-eta", 1, "private selection: eta in [0, 1] of the law of the number of runs (cost (2+eta) eps_run; 1 is Liu & Talwar's geometric law, 0 the logarithmic law)")
	fs.Float64Var(&sel.MeanRuns, "select-runs", 0, "private selection: mean number of runs E[K] (0: 10 per candidate)")
	if err := parsePaper(fs, &f, args, stderr, sweepHelp); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if len(f.PassList) > 1 {
		knobs.Passes = f.PassList
	}
	if knobs.L1Ratios == nil {
		// A zero on the command line is what the user typed, not the
		// experiments package's default.
		knobs.L1Ratios = []float64{f.L1Ratio}
	}
	if sel.ValFrac != 0 && !(sel.ValFrac > 0 && sel.ValFrac < 1) {
		return usagef("--select-val %v, want in (0, 1)", sel.ValFrac)
	}
	start := time.Now()
	rows, err := experiments.Sweep(ctx, experiments.SweepConfig{
		Protocol: f.Protocol, Splits: f.Splits, Lambdas: f.Lambdas, Epsilons: f.Epsilons,
		Mechanisms: f.Mechanisms, Delta: f.Delta, L1Ratio: f.L1Ratio, Passes: f.Passes, Knobs: knobs, Select: sel,
		Seed: f.Seed, FixedScale: f.FixedScale, Logger: f.logger(stderr),
	})
	if err != nil {
		return asUsage(err)
	}
	sum := experiments.Summarize(rows, append(f.Protocol.Notes(), experiments.ExperimentNotes...)...)
	sum.Seconds = time.Since(start).Seconds()
	sum.Command = "stabpriv sweep " + strings.Join(args, " ")
	if err := sum.WriteTable(stdout); err != nil {
		return err
	}
	paths, err := experiments.WriteSweep(f.Out, rows, sum, f.Force)
	if err != nil {
		return outfile.Error("--out", err)
	}
	fmt.Fprintf(stdout, "\n%d rows in %.1f s; wrote %s\n", len(rows), sum.Seconds, strings.Join(paths, ", "))
	return nil
}
