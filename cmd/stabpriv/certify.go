package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"

	"github.com/stabpriv/stabpriv/perturb"
)

// errNotPrivate is returned by certify for a model file without a
// certificate.
var errNotPrivate = errors.New("this model is not private: it was trained with --mechanism none")

// runCertify is the certify command: it reads a model file written by train
// and explains its privacy certificate.
func runCertify(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("certify", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, "Usage: stabpriv certify model.json\n\n"+
				"Reads a model file written by 'stabpriv train --mechanism ... --out model.json'\n"+
				"and prints its privacy certificate: the key numbers, then the claim, the\n"+
				"mechanism, the sensitivity route, every constant of the run and what the\n"+
				"guarantee does not cover, in words.\n")
			return nil
		}
		return usagef("%w (run 'stabpriv help certify')", err)
	}
	if fs.NArg() != 1 {
		return usagef("want one model file, have %d arguments", fs.NArg())
	}
	path := fs.Arg(0)
	doc, err := readModelFile(path)
	if err != nil {
		return err
	}
	return printCertificate(stdout, path, doc)
}

// readModelFile reads a model file and checks that it holds a private model
// whose certificate covers its weights.
func readModelFile(path string) (*modelFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc modelFile
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: malformed model file: %w", path, err)
	}
	c := doc.Certificate
	switch {
	case doc.Format != modelFormat:
		return nil, fmt.Errorf("%s: not a stabpriv model file (format %q, want %q)", path, doc.Format, modelFormat)
	case c == nil && doc.Private:
		return nil, fmt.Errorf("%s: malformed model file: marked private but holds no certificate", path)
	case c == nil:
		return nil, fmt.Errorf("%s: %w", path, errNotPrivate)
	case c.Version != perturb.CertificateVersion:
		return nil, fmt.Errorf("%s: certificate version %q, want %q", path, c.Version, perturb.CertificateVersion)
	case doc.Model == nil || len(doc.Model.W) != c.Dim:
		n := 0
		if doc.Model != nil {
			n = len(doc.Model.W)
		}
		return nil, fmt.Errorf("%s: the certificate covers %d weights, but the model has %d", path, c.Dim, n)
	}
	return &doc, nil
}

// printCertificate writes the key numbers of the certificate, then the
// certificate in words.
func printCertificate(w io.Writer, path string, doc *modelFile) error {
	c := doc.Certificate
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	row := func(name, value string) { fmt.Fprintf(tw, "%s\t%s\n", name, value) }
	row("file", path)
	row("mechanism", string(c.Mechanism))
	row("epsilon", g(c.Epsilon))
	row("delta", g(c.Delta))
	row("sensitivity", fmt.Sprintf("L2 = %s, route %s", g(c.L2Sensitivity), c.SensitivityRoute))
	row("beta", g(c.Beta))
	row("noise scale", fmt.Sprintf("%s = %s", c.NoiseScaleName, g(c.NoiseScale)))
	row("noise source", c.Source)
	row("weights", fmt.Sprintf("%d (%d x %d, %s loss)", c.Dim, doc.Model.K, doc.Model.D, doc.Model.Loss))
	if m := doc.Metrics.Test; m.Name != "" {
		row("test "+m.Name, fmt.Sprintf("%.4f of the released model on %d rows (not covered by the certificate)", m.Value, m.Rows))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	_, err := io.WriteString(w, c.String())
	return err
}
