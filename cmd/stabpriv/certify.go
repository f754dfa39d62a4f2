package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/modelfile/describe"
	"github.com/stabpriv/stabpriv/pdp/publish"
)

// notPrivateError is returned by certify for a valid model file that makes
// no privacy claim: main exits with code 3.
type notPrivateError struct{ why string }

func (e *notPrivateError) Error() string { return "not a private release: " + e.why }

// runCertify is the certify command: it verifies a model file written by
// train and explains its privacy certificate.
func runCertify(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("certify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	model := fs.String("model", "", "with a summary.dp.json: the model `file` whose release the summary analyses (pdp --model); its weights SHA-256, claim and constants are checked against it")
	var logLevel string
	runflags.LogLevelVar(fs, &logLevel)
	err := fs.Parse(args)
	if err == nil && fs.NArg() > 1 {
		// Flags after the file: certify summary.dp.json --model m.json.
		path := fs.Arg(0)
		if err = fs.Parse(fs.Args()[1:]); err == nil {
			args = append([]string{path}, fs.Args()...)
			err = fs.Parse(args)
		}
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, "Usage: stabpriv certify model.json\n       stabpriv certify summary.dp.json [--model model.json]\n       stabpriv certify graph.json\n\n"+
				"Verifies a model file written by 'stabpriv train --out model.json' from what it\n"+
				"publishes: it rebuilds everything beside the weights from the published inputs\n"+
				"(the run constants that follow from the loss, the step of every pass, the\n"+
				"stability route and Delta, the noise calibration, the not-covered list, the\n"+
				"ledger, the split, the weights' SHA-256) and requires the file to equal it, so no\n"+
				"field can carry anything else, and checks that the weights lie in the support\n"+
				"of the noise. Then it prints the certificate in words, and what it verified and\n"+
				"what no file can show (provenance; the names of the label, classes and features).\n\n"+
				"A summary.dp.json (stabpriv pdp --publish-epsilon) is verified the same way: every\n"+
				"number but the mechanism's draws is rebuilt from its published inputs. A summary of\n"+
				"a model file's release (pdp --model) carries the file's weights SHA-256 and claim;\n"+
				"with --model, certify checks them and the summary's constants against that file\n"+
				"(which must verify). A summary of rows standardized with their own statistics is\n"+
				"NOT PRIVATE FOR THE TABLE (exit 3). It lists what no file can show.\n\n"+
				"A graph's release file (DP-SGD on a Go program's own Gorgonia graph,\n"+
				"modelfile.GraphRelease) is verified as a model file is: the sample rate, the step\n"+
				"count, the noise multiplier and the accountant's eps are rebuilt from its budget,\n"+
				"n, b, passes and C; the program's notes are taken as written.\n\n"+
				"Exit status: 0 for a valid private release, 3 for a valid file that is not a\n"+
				"private release (no mechanism, seeded noise, or standardization statistics\n"+
				"in the file), 5 for a file that is invalid, inconsistent (each problem is\n"+
				"named) or cannot be read (missing among them), 2 for a usage error; see the\n"+
				"exit-status table in docs/GUIDE.md.\n\nFlags:\n")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
			return nil
		}
		return usagef("%w (run 'stabpriv help certify')", err)
	}
	if fs.NArg() != 1 {
		return usagef("want one model file, have %d arguments", fs.NArg())
	}
	if _, err := warningsTo(stderr, logLevel); err != nil {
		return err // certify logs nothing; the flag is checked all the same
	}
	path := fs.Arg(0)
	if publish.IsSummaryFile(path) {
		private, why, err := publish.Certify(stdout, path, *model, readModel)
		if err == nil && !private {
			err = &notPrivateError{why}
		}
		return err
	}
	if *model != "" {
		return usagef("--model applies to a summary file (summary.dp.json); %s is not one", path)
	}
	if modelfile.IsGraphFile(path) {
		// A DP-SGD release of a program's own Gorgonia graph
		// (modelfile.GraphRelease).
		return certifyFile(stdout, path, modelfile.ReadGraphFile, modelfile.VerifyGraph, describe.GraphCertificate)
	}
	return certifyFile(stdout, path, readModel, modelfile.Verify, describe.Certificate)
}

// certifyFile reads the file at path, verifies it and prints its
// certificate: an error for a file that does not read or verify, a
// notPrivateError for a valid file that is not a private release.
func certifyFile[F any](stdout io.Writer, path string, read func(string) (*F, error), verify func(*F) (modelfile.Verdict, string, error),
	print func(io.Writer, string, *F, modelfile.Verdict, string) error) error {
	f, err := read(path)
	if err != nil {
		return err
	}
	verdict, why, err := verify(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := print(stdout, path, f, verdict, why); err != nil {
		return err
	}
	if verdict == modelfile.NotPrivate {
		return &notPrivateError{why}
	}
	return nil
}

// readModel reads the model file at path (modelfile.ReadFile). A file
// that cannot be opened (missing, a directory, not readable) is a model
// file that does not read, as a malformed one is: its error matches
// modelfile.ErrFile, exit status 5, as the exit-status table says.
func readModel(path string) (*modelfile.Released, error) {
	r, err := modelfile.ReadFile(path)
	if err != nil && !errors.Is(err, modelfile.ErrFile) {
		return nil, &unreadableModel{err}
	}
	return r, err
}

// unreadableModel is the error of a model file that cannot be opened.
type unreadableModel struct{ err error }

func (e *unreadableModel) Error() string        { return "cannot read the model file: " + e.err.Error() }
func (e *unreadableModel) Unwrap() error        { return e.err }
func (e *unreadableModel) Is(target error) bool { return target == modelfile.ErrFile }
