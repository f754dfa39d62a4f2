package paper

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/experiments"
	"github.com/stabpriv/stabpriv/experiments/protocol"
	"github.com/stabpriv/stabpriv/perturb"
)

// DataEnv names the environment variable holding the data directory of
// the paper's data sets.
const DataEnv = "STABPRIV_DATA"

// Flags holds the flags shared by the sweep and featsel commands
// of stabpriv (the paper's experiments): the flag values, then what
// checkRun and checkData make of them.
type Flags struct {
	Dataset, DataDir string
	Data, Label      string
	Splits           int
	// PassesFlag, LambdasFlag, EpsilonsFlag, MechanismFlag and
	// ThresholdsFlag are the comma-separated lists as given.
	PassesFlag, LambdasFlag, EpsilonsFlag string
	MechanismFlag, ThresholdsFlag         string
	Delta, L1Ratio                        float64
	RowScale                              string
	Seed                                  uint64
	Out, LogLevel                         string
	Force                                 bool
	// FixedScale is sweep's --fixed-scale.
	FixedScale float64
	Components int
	// Rate is featsel's --rate.
	Rate float64

	// Checked values: the lists parsed, Passes the first of PassList.
	PassList                      []int
	Passes                        int
	Lambdas, Epsilons, Thresholds []float64
	Mechanisms                    []dp.Mechanism
	Level                         logrus.Level
	Protocol                      protocol.Config
}

// newFlagSet declares the shared flags of the command name.
func newFlagSet(name string, f *Flags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&f.Dataset, "dataset", "", "data set: "+strings.Join(protocol.DataSets, ", ")+" (required)")
	fs.StringVar(&f.DataDir, "data-dir", "", "`directory` holding adult/, lastfm_asia/ and gene_all/ (default: $"+DataEnv+")")
	fs.StringVar(&f.Data, "data", "", "csv data set: the CSV `file` (header row, numeric features, a label of two classes (logistic) or more (softmax))")
	fs.StringVar(&f.Label, "label", "", "csv data set: the label `column`")
	fs.IntVar(&f.Splits, "splits", experiments.DefaultSplits, "number of seeded 80/20 splits (split s uses seed+s)")
	fs.StringVar(&f.LambdasFlag, "lambdas", "", "comma-separated elastic-net strengths (default: 7 log-spaced values, from 1e-4 to 1e-2 for adult and csv, 1e-4 to 1e-1 for lastfm, 1e-3 to 1 for gene_all)")
	fs.StringVar(&f.EpsilonsFlag, "epsilons", "0.1,0.5,1,2,5", "comma-separated privacy levels eps")
	fs.StringVar(&f.MechanismFlag, "mechanism", string(perturb.Gamma), "noise: one of "+perturb.MechanismList()+" (sweep: a comma-separated list, released side by side, which may also name the training-time mechanisms objective and amp)")
	fs.Float64Var(&f.Delta, "delta", experiments.DefaultDelta, "delta of the Gaussian mechanisms (ignored by gamma and laplace)")
	fs.Float64Var(&f.L1Ratio, "l1-ratio", experiments.DefaultL1Ratio, "elastic-net L1 share alpha in [0, 1); mu = lambda*(1-alpha)")
	fs.StringVar(&f.PassesFlag, "passes", strconv.Itoa(experiments.DefaultPasses), "SGD passes (sweep: a comma-separated list)")
	fs.IntVar(&f.Components, "components", protocol.DefaultComponents, "truncated-SVD components fitted on each training split (the paper's protocol: 32; -1 keeps every feature; lastfm is reduced by its loader)")
	fs.StringVar(&f.RowScale, "row-scale", protocol.ScaleClipOnly.String(), "map before clipping rows into the unit ball: clip or sqrt-d")
	fs.Uint64Var(&f.Seed, "seed", 1, "base seed of the splits, the training and the (seeded) noise")
	fs.StringVar(&f.Out, "out", "", "output `directory` (created; required; existing files there are replaced only with --force, an input or a model file never)")
	fs.BoolVar(&f.Force, "force", false, "replace existing output files in --out (never a model file, nor an input)")
	runflags.LogLevelVar(fs, &f.LogLevel)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// listVar defines the flag name of a comma-separated list, read by parse:
// p stays nil unless the flag is given, and an empty list is refused.
func listVar[T any](fs *flag.FlagSet, p *[]T, name, usage string, parse func(string, string) ([]T, error)) {
	fs.Func(name, usage, func(s string) error {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("--%s: empty list", name)
		}
		v, err := parse(name, s)
		*p = v
		return err
	})
}

// bools parses a comma-separated list of true/false.
func bools(name, s string) ([]bool, error) {
	var out []bool
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseBool(strings.TrimSpace(part))
		if err != nil {
			return nil, usagef("--%s: %q is not true or false", name, part)
		}
		out = append(out, v)
	}
	return out, nil
}

// checkRun checks the flags of the command name (sweep or featsel) that
// shape its runs: the lists, the protocol, the mechanisms and delta;
// fs holds the flags given. Every error is a usage error.
func (f *Flags) checkRun(fs *flag.FlagSet) error {
	cmd := fs.Name()
	var err error
	if f.Lambdas, err = runflags.Floats("lambdas", f.LambdasFlag); err != nil {
		return err
	}
	if f.Epsilons, err = runflags.Floats("epsilons", f.EpsilonsFlag); err != nil {
		return err
	}
	if f.Thresholds, err = runflags.Floats("thresholds", f.ThresholdsFlag); err != nil {
		return err
	}
	if f.PassList, err = runflags.Ints("passes", f.PassesFlag); err != nil {
		return err
	}
	if len(f.PassList) == 0 {
		return usagef("--passes: empty list")
	}
	f.Passes = f.PassList[0]
	if f.Level, err = runflags.ParseLogLevel(f.LogLevel); err != nil {
		return err
	}
	rs, err := protocol.ParseRowScale(f.RowScale)
	if err != nil {
		return usagef("--row-scale: %w", err)
	}
	if f.Components == 0 || f.Components < -1 {
		return usagef("--components %d, want >= 1, or -1 for no SVD", f.Components)
	}
	if f.Components != protocol.DefaultComponents && f.Dataset == "lastfm" {
		return usagef("--components: lastfm is reduced by its loader (32 components, fitted on all nodes), not by the protocol")
	}
	if f.Splits < 1 {
		return usagef("--splits %d, want >= 1", f.Splits)
	}
	for _, p := range f.PassList {
		if p < 1 {
			return usagef("--passes %d, want >= 1", p)
		}
	}
	if !(f.L1Ratio >= 0 && f.L1Ratio < 1) {
		return usagef("--l1-ratio %v, want in [0, 1): the stability route needs mu = lambda(1 - l1 ratio) > 0", f.L1Ratio)
	}
	f.Protocol = protocol.Config{RowScale: rs, Components: f.Components}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	pure := true
	for _, m := range strings.Split(f.MechanismFlag, ",") {
		mech, err := perturb.ParseMechanism(strings.TrimSpace(m))
		if err != nil {
			return usagef("--mechanism: %w", err)
		}
		if slices.Contains(f.Mechanisms, mech) {
			return usagef("--mechanism: %s repeated", mech)
		}
		if mech == perturb.Stump {
			return usagef("--mechanism stump: %s sweeps lambda, and a decision stump has no lambda; use 'stabpriv train --mechanism stump'", cmd)
		}
		if _, err := perturb.Lookup(mech); cmd != "sweep" && err != nil {
			return usagef("--mechanism %s: %s releases trained weights by output perturbation; the training-time mechanisms run in sweep", mech, cmd)
		}
		f.Mechanisms = append(f.Mechanisms, mech)
		pure = pure && mech.Pure()
	}
	if cmd != "sweep" && (len(f.Mechanisms) > 1 || len(f.PassList) > 1 || f.L1Ratio == 0) {
		return usagef("%s takes one --mechanism, one --passes and an --l1-ratio in (0, 1)", cmd)
	}
	switch {
	case pure && set["delta"] && f.Delta != 0:
		return usagef("--delta %v with --mechanism %s: a pure mechanism takes no delta", f.Delta, f.MechanismFlag)
	case !pure && !(f.Delta > 0 && f.Delta < 1):
		return usagef("--delta %v with --mechanism %s, want in (0, 1)", f.Delta, f.MechanismFlag)
	}
	return nil
}

// checkData checks the data flags of sweep and featsel: a named data set and its directory ($STABPRIV_DATA by default), or a
// CSV file and its label. Every error is a usage error.
func (f *Flags) checkData() error {
	switch f.Dataset {
	case "":
		if f.Data != "" {
			return usagef("--data %s needs --dataset csv (the other data sets are read by name)", f.Data)
		}
		return usagef("--dataset is required: one of %s", strings.Join(protocol.DataSets, ", "))
	case protocol.CSV:
		if f.Data == "" || f.Label == "" {
			return usagef("--dataset csv needs --data FILE and --label COLUMN")
		}
	default:
		if !slices.Contains(protocol.DataSets, f.Dataset) {
			return usagef("--dataset %q, want one of %s", f.Dataset, strings.Join(protocol.DataSets, ", "))
		}
		if f.Data != "" || f.Label != "" {
			return usagef("--data and --label apply to --dataset csv only")
		}
		if f.DataDir == "" {
			f.DataDir = os.Getenv(DataEnv)
		}
		if f.DataDir == "" {
			return usagef("no data directory: give --data-dir DIR (e.g. ../shared/datasets) or set $%s", DataEnv)
		}
	}
	f.Protocol.Dataset, f.Protocol.DataDir, f.Protocol.CSVFile, f.Protocol.Label = f.Dataset, f.DataDir, f.Data, f.Label
	return nil
}

// logger returns a logrus logger on w at the flags' level.
func (f *Flags) logger(w io.Writer) *logrus.Logger {
	log := logrus.New()
	log.SetOutput(w)
	log.SetLevel(f.Level)
	return log
}

// usagef is runflags.Usagef: a usage error (exit 2).
var usagef = runflags.Usagef
