// Command stabpriv trains differentially private linear classifiers by
// stable SGD and accounts for their stability.
//
// Usage:
//
//	stabpriv <command> [flags]
//
// The commands are:
//
//	train   train a linear model on a CSV file or the embedded breast-cancer data
//	certify verify a model file written by train and print its certificate
//	predict apply a model file to the rows of a CSV file
//	sweep   run the paper's accuracy experiments (Figures 1 and 2) on a data set
//	featsel run the paper's private feature-selection experiments (Figures 3 and 5)
//	pdp     per-instance DP of an output-perturbation release over the training rows (confidential)
//	account eps of DP-SGD's Poisson-subsampled Gaussian over many steps, or the noise for an eps
//	version print the version of stabpriv and of the Go toolchain that built it
//	help    list the commands, or show the flags of one: stabpriv help train
//
// Exit codes (the table "Exit statuses" in docs/GUIDE.md, which
// TestExitStatusTable runs): 0 on success; 1 for a run that failed
// otherwise (an error writing, a run no route certifies); 2 for a usage
// error (unknown command or flag, a bad flag value, inputs that cannot make
// a run, an output path that is refused, one that another run wrote
// meanwhile among them); 3 from certify for a valid model file that is not
// a private release; 4 for an input data file that is missing or malformed;
// 5 for a model file or a published pDP summary that does not read
// (missing among them) or does not verify; 128 plus the signal's number
// when stopped by SIGINT (130), SIGTERM (143) or SIGHUP (129). Every output
// appears whole or not at all, so an error leaves the file system as it
// was.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/sirupsen/logrus"

	"github.com/stabpriv/stabpriv/cmd/paper"
	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/internal/interrupt"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/pdp/publish"
)

// command is one subcommand. run parses its own flags from args.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands returns the command table, in the order help lists it.
func commands() []command {
	return []command{
		{"train", "train a linear model on a CSV file or the embedded breast-cancer data", runTrain},
		{"certify", "verify a model file written by train and print its privacy certificate", runCertify},
		{"predict", "apply a model file to the rows of a CSV file", runPredict},
		{"sweep", "run the paper's accuracy experiments (Figures 1 and 2) on a data set", paper.Sweep},
		{"featsel", "run the paper's private feature-selection experiments (Figures 3 and 5)", paper.FeatSel},
		{"pdp", "per-instance DP of an output-perturbation release over the training rows (confidential)", runPDP},
		{"account", "eps of DP-SGD's Poisson-subsampled Gaussian over many steps, or the noise for an eps", runAccount},
	}
}

// usageError marks an error in the command line: main exits with code 2.
type usageError = runflags.UsageError

// usagef returns a usageError with a formatted message.
var usagef = runflags.Usagef

// exitCode maps the error of run to the exit status of the process.
func exitCode(err error) int {
	var (
		ue  *usageError
		np  *notPrivateError
		sig *interrupt.Error
	)
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue), errors.Is(err, datasets.ErrSchema):
		return 2
	case errors.As(err, &np):
		return 3
	case errors.As(err, &sig):
		return sig.Status()
	case errors.Is(err, context.Canceled):
		return 130
	case errors.Is(err, modelfile.ErrFile), errors.Is(err, publish.ErrFile):
		return 5
	case errors.Is(err, datasets.ErrFormat), errors.Is(err, fs.ErrNotExist), errors.Is(err, paper.ErrNoData):
		return 4
	}
	return 1
}

func main() {
	ctx := interrupt.Context(context.Background(), "stabpriv", os.Stderr)
	err := runContext(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stabpriv:", err)
	}
	os.Exit(exitCode(err))
}

// run executes the command line args (without the program name), writing
// results to stdout and usage, logs and diagnostics to stderr. It returns a
// *usageError for a bad command line.
func run(args []string, stdout, stderr io.Writer) error {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is run, stopped when ctx is cancelled.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printUsage(stderr)
		return usagef("no command")
	}
	name, rest := args[0], args[1:]
	switch name {
	case "version", "-version", "--version":
		switch {
		case len(rest) == 1 && isHelpFlag(rest[0]):
			fmt.Fprintln(stdout, versionHelp)
			return nil
		case len(rest) > 0:
			return usagef("version takes no arguments, got %q", rest)
		}
		printVersion(stdout)
		return nil
	case "help", "-h", "-help", "--help":
		if len(rest) == 0 || rest[0] == "help" {
			printUsage(stdout)
			return nil
		}
		if rest[0] == "version" {
			fmt.Fprintln(stdout, versionHelp)
			return nil
		}
		if c, ok := lookup(rest[0]); ok {
			return c.run(ctx, []string{"-h"}, stdout, stdout)
		}
		return usagef("help: unknown command %q; run 'stabpriv help' for the list", rest[0])
	}
	c, ok := lookup(name)
	if !ok {
		printUsage(stderr)
		return usagef("unknown command %q", name)
	}
	err := c.run(ctx, rest, stdout, stderr)
	if err != nil && ctx.Err() != nil {
		// Stopped by a signal: whatever the command returned, the cause is
		// the signal (exit 128 plus its number).
		return fmt.Errorf("%s: %w, nothing written", c.name, context.Cause(ctx))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	return nil
}

// versionHelp is the help of the version command.
const versionHelp = "Usage: stabpriv version\n\nPrints the version of stabpriv (its module version and commit) and of the Go toolchain."

// isHelpFlag reports whether arg asks for help, as the flag package's -h
// and -help do.
func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "--h", "-help", "--help":
		return true
	}
	return false
}

// printVersion writes the module's version and commit, from the build
// information, and the Go version.
func printVersion(w io.Writer) {
	version, commit, dirty := "(devel)", "unknown", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if dirty {
		commit += " (modified)"
	}
	fmt.Fprintf(w, "stabpriv %s, commit %s, %s %s/%s\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// parseFlags parses a command's args into fs. On -h it writes help and the
// flags to stderr and returns flag.ErrHelp; a parse error or an extra
// argument is a usage error. It returns the names of the flags set.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer, help string) (map[string]bool, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, help, "\nFlags:\n")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
			return nil, err
		}
		return nil, usagef("%w (run 'stabpriv help %s' for the flags)", flagError(err), fs.Name())
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q", fs.Arg(0))
	}
	set := make(map[string]bool)
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return set, nil
}

// flagError rewrites the flag package's "invalid value "x" for flag -name:
// why" as "--name "x": why", the spelling of the help and the messages.
func flagError(err error) error {
	msg := err.Error()
	const pre, mid = "invalid value ", " for flag -"
	if !strings.HasPrefix(msg, pre) {
		return err
	}
	i := strings.Index(msg, mid)
	j := strings.Index(msg[max(i, 0):], ": ")
	if i < 0 || j < 0 {
		return err
	}
	value, name, why := msg[len(pre):i], msg[i+len(mid):i+j], msg[i+j+2:]
	return fmt.Errorf("--%s %s: %s", name, value, why)
}

func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, "stabpriv trains differentially private linear models by stable SGD.\n\nUsage:\n\n\tstabpriv <command> [flags]\n\nCommands:\n\n")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, c := range commands() {
		fmt.Fprintf(tw, "\t%s\t%s\n", c.name, c.summary)
	}
	fmt.Fprintf(tw, "\t%s\t%s\n", "version", "print the version of stabpriv and of Go")
	fmt.Fprintf(tw, "\t%s\t%s\n", "help", "list the commands, or show the flags of one")
	tw.Flush()
	fmt.Fprintf(w, "\nRun 'stabpriv help <command>' for the flags of a command (%s).\n", strings.Join(commandNames(), ", "))
}

func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// warningsTo reads the value of --log-level of a command that logs only
// warnings (certify, predict, pdp) and returns where it writes them:
// stderr, or nowhere at the error and panic levels.
func warningsTo(stderr io.Writer, logLevel string) (io.Writer, error) {
	level, err := runflags.ParseLogLevel(logLevel)
	switch {
	case err != nil:
		return nil, err
	case level < logrus.WarnLevel:
		return io.Discard, nil
	}
	return stderr, nil
}
