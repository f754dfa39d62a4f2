package modelfile

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/internal/safefile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/release/dpsgd"
	"github.com/stabpriv/stabpriv/trainer"
)

// GraphFormat names the format of a graph's release file: the parameters
// of a program's own Gorgonia graph trained by DP-SGD (graph.TrainDPSGD)
// and their certificate, without the table, schema and preprocessing of a
// model file (the rows were the program's).
const GraphFormat = "stabpriv-graph-dpsgd/1"

// GraphRelease is a graph's release file (GraphFormat), which `stabpriv
// certify` verifies (VerifyGraph). A program writes the result res of
// graph.TrainDPSGD with
//
//	(&modelfile.GraphRelease{Model: res.Model, Certificate: res.Certificate}).WriteFile(path, false)
type GraphRelease struct {
	// Model holds the trained parameters: loss dpsgd.GraphLoss,
	// K = 1, D parameters, W their values concatenated in the order of the
	// graph's Params (evaluate the graph to predict).
	Model *trainer.Model `json:"model"`
	// Certificate is the dp-sgd certificate of the release.
	Certificate *release.Certificate `json:"certificate"`
}

// graphFile is the JSON document of a graph's release file.
type graphFile struct {
	Format string `json:"format"`
	*GraphRelease
}

// Write writes g as a graph's release file (JSON, GraphFormat, laid out as
// a model file).
func (g *GraphRelease) Write(w io.Writer) error { return writeDoc(w, g.encode) }

// encode returns the bytes Write writes.
func (g *GraphRelease) encode() ([]byte, error) {
	return encodeDoc(graphFile{Format: GraphFormat, GraphRelease: g}, "graph's release file", ": train fewer parameters")
}

// WriteFile writes g to path with Write, as Released.WriteFile writes a
// model file: whole or not at all, and without replace never over a file
// at path.
func (g *GraphRelease) WriteFile(path string, replace bool) error {
	return writeFile(path, replace, g.Write)
}

// ReadGraph reads a graph's release file and checks its structure: the
// format, the shape of the parameters (checkShape), no field beyond those
// Write writes, and that the file is byte for byte what Write writes for
// the values read (as Read checks a model file). It does not verify the
// certificate (VerifyGraph does). Errors wrap ErrFile.
func ReadGraph(rd io.Reader) (*GraphRelease, error) {
	data, err := readData(rd)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Format string `json:"format"`
		GraphRelease
	}
	g := &doc.GraphRelease
	if err := decode(data, &doc, &doc.Format, GraphFormat, "graph's release file", g.checkShape, g.encode); err != nil {
		return nil, err
	}
	return g, nil
}

// ReadGraphFile reads the graph's release file at path with ReadGraph.
func ReadGraphFile(path string) (*GraphRelease, error) { return readFile(path, ReadGraph) }

// IsGraphFile reports whether the file at path starts as a graph's
// release file does.
func IsGraphFile(path string) bool {
	s := strings.Join(strings.Fields(string(safefile.Head(path, 256))), "")
	return strings.HasPrefix(s, `{"format":"stabpriv-graph-dpsgd/`)
}

// checkShape checks the parameters: the graph's loss name, the zero task
// that graph.TrainDPSGD writes, one output of D >= 1 finite parameters,
// and a certificate.
func (g *GraphRelease) checkShape() error {
	m := g.Model
	switch {
	case m == nil || g.Certificate == nil:
		return fmt.Errorf("%w: a graph's release file without its parameters or certificate", ErrFile)
	case m.Loss != dpsgd.GraphLoss || m.Task != 0:
		return fmt.Errorf("%w: the parameters are of loss %q, task %d; a graph's are of %q, task 0", ErrFile, m.Loss, m.Task, dpsgd.GraphLoss)
	case m.K != 1 || m.D < 1 || len(m.W) != m.D:
		return fmt.Errorf("%w: %d x %d parameters with %d values, want 1 x D", ErrFile, m.K, m.D, len(m.W))
	}
	if i := check.FirstNonFinite(m.W); i >= 0 {
		return fmt.Errorf("%w: parameter %d is %v", ErrFile, i, m.W[i])
	}
	return nil
}

// VerifyGraph checks a graph's release file from what it publishes, as
// Verify checks a model file: what every certificate must hold
// (checkHeader: the format version, the parameters' SHA-256, no -0, the
// claim's range with delta below 1/n, the ledger within the claim, a
// known source), a run no longer than a verification analyses
// (checkWork), and the certificate rebuilt from the published inputs
// (dpsgd.RebuildGraph: the noise multiplier by the accountant, the
// run record, the accountant's eps, the ledger, the notes), which the
// file must equal field for field. It returns PrivateRelease, NotPrivate
// with the reason (seeded noise), or an error wrapping ErrVerify that
// names the inconsistencies.
func VerifyGraph(g *GraphRelease) (Verdict, string, error) {
	if g == nil {
		return 0, "", fmt.Errorf("%w: no graph's release file", ErrFile)
	}
	if err := g.checkShape(); err != nil {
		return 0, "", err
	}
	c := g.Certificate
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	// The checks every certificate shares, on a model file of the graph's
	// parameters whose training rows are the run's n.
	shim := &Released{Model: g.Model, Certificate: c, Preprocessing: &preprocess.RowMap{}}
	if run := c.Run; run == nil {
		bad("the certificate has no run record")
	} else {
		shim.Split.TrainRows = run.N
		checkWork(run, bad)
		if run.Loss != g.Model.Loss || run.K != 1 || run.D != g.Model.D {
			bad("the run (%s, %d x %d) is not the parameters (%s, 1 x %d)", run.Loss, run.K, run.D, g.Model.Loss, g.Model.D)
		}
	}
	checkHeader(shim, bad)
	if len(errs) > 0 {
		return 0, "", fmt.Errorf("%w: %w", ErrVerify, errors.Join(errs...))
	}
	want, err := dpsgd.RebuildGraph(c)
	if err != nil {
		return 0, "", fmt.Errorf("%w: %w", ErrVerify, err)
	}
	got := &Released{Certificate: c}
	if diffs := diffJSON(&Released{Certificate: want}, got); diffs != "" && diffJSON(withFormerNotes(&Released{Certificate: want}), got) != "" {
		return 0, "", fmt.Errorf("%w: the file differs from the release its published constants give: %s", ErrVerify, diffs)
	}
	if c.Source == perturb.SourceSeeded {
		return NotPrivate, fmt.Sprintf("the noise was drawn from a seeded generator whose seed (%d) is published: anyone can subtract it", *c.NoiseSeed), nil
	}
	return PrivateRelease, "", nil
}

// GraphChecked lists what VerifyGraph checks of a graph's release file,
// and GraphUnchecked what it cannot: certify prints both.
var (
	GraphChecked = []string{
		"the format, and that the file has no field beyond it and is byte for byte what GraphRelease.Write writes for its values",
		"the parameters: one output of D finite values, of the graph's loss name, their SHA-256 against the certificate and no -0 among them",
		"the claim: eps from 2^-50 to 100 and delta in (0, 1) below 1/n for the n training rows; the ledger's charges adding up to at most the claim in exact arithmetic",
		"the certificate, rebuilt from the published inputs (the budget, n, the number of parameters, the step, the expected batch, the passes, the clipping norm, the source): the sample rate, the step count, the noise multiplier by the accountant and its eps, the noise scale, the ledger, the neighbouring relation and the graph's not-covered notes",
	}
	GraphUnchecked = []string{
		"provenance: a file has no signature, so parameters replaced together with their hash, a seeded release relabelled secure, or settings other than the run's are consistent forgeries",
		"the graph: what it computes and that each example's loss reads that example alone (checked on a public probe when it trained, not provable from the file), and that its initial parameters did not read the rows",
		"the notes the program added after the graph's (how its rows were prepared, for example): they are as the program wrote them",
	}
)
