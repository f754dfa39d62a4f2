package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/modelfile"
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
	model := fs.String("model", "", "")
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
			fmt.Fprint(stderr, "Usage: stabpriv certify model.json\n       stabpriv certify summary.dp.json [--model model.json]\n\n"+
				"A summary.dp.json (stabpriv pdp --publish-epsilon) is verified the same way: every\n"+
				"number but the mechanism's draws is rebuilt from its published inputs. A summary of\n"+
				"a model file's release (pdp --model) carries the file's weights SHA-256 and claim;\n"+
				"with --model, certify checks them and the summary's constants against that file\n"+
				"(which must verify). A summary of rows standardized with their own statistics is\n"+
				"NOT PRIVATE FOR THE TABLE (exit 3). It lists what no file can show.\n\n"+
				"Verifies a model file written by 'stabpriv train --out model.json' from what it\n"+
				"publishes: it rebuilds everything beside the weights from the published inputs\n"+
				"(the run constants that follow from the loss, the step of every pass, the\n"+
				"stability route and Delta, the noise calibration, the not-covered list, the\n"+
				"ledger, the split, the weights' SHA-256) and requires the file to equal it, so no\n"+
				"field can carry anything else, and checks that the weights lie in the support\n"+
				"of the noise. Then it prints the certificate in words, and what it verified and\n"+
				"what no file can show (provenance; the names of the label, classes and features).\n\n"+
				"Exit status: 0 for a valid private release, 3 for a valid file that is not a\n"+
				"private release (no mechanism, seeded noise, or standardization statistics\n"+
				"in the file), 5 for a file that is invalid, inconsistent (each problem is\n"+
				"named) or cannot be read (missing among them), 2 for a usage error; see the\n"+
				"exit-status table in docs/GUIDE.md.\n")
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
	if isSummaryFile(path) {
		return certifySummary(stdout, path, *model)
	}
	if *model != "" {
		return usagef("--model applies to a summary file (summary.dp.json); %s is not one", path)
	}
	r, err := readModel(path)
	if err != nil {
		return err
	}
	verdict, why, err := modelfile.Verify(r)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if verdict == modelfile.NotPrivate {
		fmt.Fprintf(stdout, "NOT A PRIVATE RELEASE: %s\n\n", why)
	} else {
		fmt.Fprintln(stdout, "VERIFIED PRIVATE RELEASE: the file equals the release its published inputs give (its provenance cannot be checked)")
		fmt.Fprintln(stdout)
	}
	if err := printCertificate(stdout, path, r); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nVerified in this file:")
	for _, s := range modelfile.Checked {
		fmt.Fprintf(stdout, "  - %s\n", s)
	}
	fmt.Fprintln(stdout, "Not verified (no file can show it):")
	for _, s := range modelfile.Unchecked {
		fmt.Fprintf(stdout, "  - %s\n", s)
	}
	if verdict == modelfile.NotPrivate {
		return &notPrivateError{why}
	}
	return nil
}

// printCertificate writes the key numbers of the certificate, then the
// certificate in words.
func printCertificate(w io.Writer, path string, r *modelfile.Released) error {
	c := r.Certificate
	if c == nil {
		fmt.Fprintf(w, "file\t%s\nno certificate: trained with --mechanism none\n", path)
		return nil
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	row := func(name, value string) { fmt.Fprintf(tw, "%s\t%s\n", name, value) }
	row("file", path)
	row("private release", strconv.FormatBool(r.Private))
	row("mechanism", string(c.Mechanism))
	row("epsilon", g(c.Epsilon))
	row("delta", g(c.Delta))
	row("sensitivity", fmt.Sprintf("L2 = %s, route %s", g(c.L2Sensitivity), c.SensitivityRoute))
	row("beta", g(c.Beta))
	row("noise scale", fmt.Sprintf("%s = %s", c.NoiseScaleName, g(c.NoiseScale)))
	row("noise source", c.Source)
	row("weights", fmt.Sprintf("%d (%d x %d, %s loss), SHA-256 %s", c.Dim, r.Model.K, r.Model.D, r.Model.Loss, c.WeightsSHA256))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	_, err := io.WriteString(w, c.String())
	return err
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
