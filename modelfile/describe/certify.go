package describe

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// Certificate writes what stabpriv certify prints for the model file r at
// path, whose Verify gave verdict and why: the verdict, the key numbers of
// the certificate and the certificate in words, then what the check
// verified (modelfile.Checked) and what no file can show
// (modelfile.Unchecked).
func Certificate(w io.Writer, path string, r *modelfile.Released, verdict modelfile.Verdict, why string) error {
	return certificate(w, path, file{r.Private, r.Model, r.Certificate}, verdict, why, modelfile.Checked, modelfile.Unchecked)
}

// GraphCertificate is Certificate for the graph's release file g
// (modelfile.VerifyGraph), with modelfile.GraphChecked and
// modelfile.GraphUnchecked.
func GraphCertificate(w io.Writer, path string, g *modelfile.GraphRelease, verdict modelfile.Verdict, why string) error {
	return certificate(w, path, file{g.Certificate.Private, g.Model, g.Certificate}, verdict, why, modelfile.GraphChecked, modelfile.GraphUnchecked)
}

// file is what certify prints of a file: whether it is a private release,
// its weights and its certificate.
type file struct {
	private bool
	model   *trainer.Model
	cert    *release.Certificate
}

// certificate writes the verdict, the certificate (printCertificate) and
// the lists of what was checked and what was not.
func certificate(w io.Writer, path string, f file, verdict modelfile.Verdict, why string, checked, unchecked []string) error {
	if verdict == modelfile.NotPrivate {
		fmt.Fprintf(w, "NOT A PRIVATE RELEASE: %s\n\n", why)
	} else {
		fmt.Fprintln(w, "VERIFIED PRIVATE RELEASE: the file equals the release its published inputs give (its provenance cannot be checked)")
		fmt.Fprintln(w)
	}
	if err := printCertificate(w, path, f); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nVerified in this file:")
	for _, s := range checked {
		fmt.Fprintf(w, "  - %s\n", s)
	}
	fmt.Fprintln(w, "Not verified (no file can show it):")
	for _, s := range unchecked {
		fmt.Fprintf(w, "  - %s\n", s)
	}
	return nil
}

// printCertificate writes the key numbers of the certificate, then the
// certificate in words.
func printCertificate(w io.Writer, path string, f file) error {
	c := f.cert
	if c == nil {
		fmt.Fprintf(w, "file\t%s\nno certificate: trained with --mechanism none\n", path)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	row := func(name, value string) { fmt.Fprintf(tw, "%s\t%s\n", name, value) }
	row("file", path)
	row("private release", strconv.FormatBool(f.private))
	row("mechanism", string(c.Mechanism))
	row("epsilon", g6(c.Epsilon))
	row("delta", g6(c.Delta))
	row("sensitivity", fmt.Sprintf("L2 = %s, route %s", g6(c.L2Sensitivity), c.SensitivityRoute))
	row("beta", g6(c.Beta))
	row("noise scale", fmt.Sprintf("%s = %s", c.NoiseScaleName, g6(c.NoiseScale)))
	row("noise source", c.Source)
	row("weights", fmt.Sprintf("%d (%d x %d, %s loss), SHA-256 %s", c.Dim, f.model.K, f.model.D, f.model.Loss, c.WeightsSHA256))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	_, err := io.WriteString(w, c.String())
	return err
}
