package publish

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/stabpriv/stabpriv/internal/inputcap"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/pdp/report"
	"github.com/stabpriv/stabpriv/perturb"
)

// marshal returns the JSON form of a summary, indented, with a final
// newline: the bytes Write writes. A summary larger than MaxFileBytes,
// which Read refuses, is an error.
func marshal(s *Summary) ([]byte, error) {
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	if len(js)+1 > MaxFileBytes {
		return nil, fmt.Errorf("publish: the summary would be %s, more than the %s its readers accept (MaxFileBytes)", inputcap.Size(int64(len(js))+1), inputcap.Size(MaxFileBytes))
	}
	return append(js, '\n'), nil
}

// Write writes the summary as JSON.
func (s *Summary) Write(w io.Writer) error {
	js, err := marshal(s)
	if err != nil {
		return err
	}
	_, err = w.Write(js)
	return err
}

// Read reads a summary file. A field this package does not write could
// carry anything, a statistic of the data included: such a file is
// refused, as is one of another format, or one larger than MaxFileBytes
// (a stream once it passes the cap). Read does not verify the summary
// (Verify does). The file must be byte for byte what Write writes for the
// values read: a key twice or in another case, extra digits, other spacing
// or data after the summary could carry what no check of the values sees.
func Read(rd io.Reader) (*Summary, error) {
	data, err := inputcap.ReadAll(rd, summaryCaps)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFile, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Summary
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFile, err)
	}
	if s.Format != Format {
		return nil, fmt.Errorf("%w: format %q, want %q", ErrFile, s.Format, Format)
	}
	// The values are the whole content: a key twice or in another case,
	// extra digits, other spacing or data after the summary could carry
	// what no check of the values sees.
	canon, err := marshal(&s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFile, err)
	}
	if !bytes.Equal(canon, data) {
		return nil, fmt.Errorf("%w: not in the form stabpriv writes (a key twice or in another case, extra digits, spacing, data after it)", ErrFile)
	}
	return &s, nil
}

// MaxFileBytes is the most bytes of a summary file: Read refuses a larger
// one (a regular file from its size, before it is read; a stream once it
// passes the cap), and Write does not write one. A summary holds at most
// 100 quantiles and 100 levels with a few numbers each: tens of KiB.
const MaxFileBytes = 16 << 20

// summaryCaps are the caps of a summary file.
var summaryCaps = inputcap.Caps{Kind: "summary file", Bytes: MaxFileBytes}

// ReadFile reads the summary file at path: a directory, or a regular file
// larger than MaxFileBytes, is refused before it is read.
func ReadFile(path string) (*Summary, error) {
	f, err := inputcap.Open(path, summaryCaps)
	if errors.Is(err, inputcap.ErrCap) {
		return nil, fmt.Errorf("%w: %w", ErrFile, err)
	}
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	defer f.Close()
	s, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// IsSummary reports whether the bytes of a JSON file begin like a summary
// file (its format field first, as Write writes it).
func IsSummary(head []byte) bool {
	compact := strings.Join(strings.Fields(string(head)), "")
	return strings.HasPrefix(compact, `{"format":"`+Format+`"`)
}

// Verify checks a summary from what it publishes, the way a third party
// would: from the release's public constants, the budget and the source
// it rebuilds every derived constant, the certificate, the ledger, the
// claims of every draw and the warnings, and requires the file to equal
// the rebuilt summary byte for byte, so that no field (free text
// included) can carry anything else. The draws themselves (grid indices
// and counts) must lie in their ranges; which values were drawn cannot be
// checked (a consistent forgery verifies), nor where the file came from.
//
// It returns whether the summary is private (drawn from the secure
// source) and, if not, why; an error wrapping ErrFile names an
// inconsistency.
func Verify(s *Summary) (private bool, why string, err error) {
	if s == nil {
		return false, "", fmt.Errorf("%w: no summary", ErrFile)
	}
	c := s.Certificate
	switch {
	case c.Source == perturb.SourceSecure && c.NoiseSeed == nil:
	case c.Source == perturb.SourceSeeded && c.NoiseSeed != nil:
	default:
		return false, "", fmt.Errorf("%w: source %q with seed %v: want %q without a seed or %q with one", ErrFile, c.Source, c.NoiseSeed, perturb.SourceSecure, perturb.SourceSeeded)
	}
	pl, err := newPlan(s.Release, s.Budget)
	if err != nil {
		return false, "", fmt.Errorf("%w: %w", ErrFile, err)
	}
	if len(s.Quantiles) != len(pl.quantiles) || len(s.Levels) != len(pl.levels) {
		return false, "", fmt.Errorf("%w: %d quantiles and %d levels for a budget of %d and %d", ErrFile, len(s.Quantiles), len(s.Levels), len(pl.quantiles), len(pl.levels))
	}
	// One draw per rank, read from its first quantile: the others must
	// repeat it (the rebuilt file would differ).
	q := make([]int, len(pl.ranks))
	for i, qp := range pl.quantiles {
		if qp.draw >= 0 && (i == 0 || pl.quantiles[i-1].draw != qp.draw) {
			q[qp.draw] = s.Quantiles[i].GridIndex
		}
	}
	l := make([]int, len(s.Levels))
	for i, v := range s.Levels {
		l[i] = v.Count
	}
	want, err := pl.assemble(q, l, c.Source, c.NoiseSeed)
	if err != nil {
		return false, "", err
	}
	got, err1 := marshal(s)
	exp, err2 := marshal(want)
	if err := errors.Join(err1, err2); err != nil {
		return false, "", fmt.Errorf("%w: %w", ErrFile, err)
	}
	if !bytes.Equal(got, exp) {
		return false, "", fmt.Errorf("%w: the file differs from the summary its published inputs and draws give: %s", ErrFile, firstDiff(got, exp))
	}
	switch {
	case s.Release.StandardizedOnRows:
		return false, "NOT PRIVATE FOR THE TABLE: the features were standardized with statistics of the training rows, so replacing one row changes every row and the summary's neighbourhood does not hold (use --standardize none, or declared or estimated bounds as in train)", nil
	case !want.Certificate.Private:
		return false, fmt.Sprintf("the draws came from a seeded generator whose seed (%d) is published: anyone can recompute them", *c.NoiseSeed), nil
	}
	return true, "", nil
}

// firstDiff names the first line where got differs from want.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d is %s, want %s", i+1, strings.TrimSpace(g[i]), strings.TrimSpace(w[i]))
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// CheckModel checks that a summary is of the release of the model file r:
// the file must verify (modelfile.Verify), and the summary's binding (the
// weights' SHA-256 and the certificate's claim) and every public constant
// it states but the solver's tolerance (mechanism, noise, n, dim, lambda,
// the Lipschitz and smoothness constants, standardized_on_rows) must
// equal those the model file gives (report.ModelConstants). An error wraps
// ErrFile and names the first difference. It does not show that the rows
// summarized were the model's training rows.
func CheckModel(s *Summary, r *modelfile.Released) error {
	if s == nil || r == nil {
		return fmt.Errorf("%w: no summary or no model file", ErrFile)
	}
	if _, _, err := modelfile.Verify(r); err != nil {
		return fmt.Errorf("%w: the model file does not verify: %w", ErrFile, err)
	}
	if s.Release.WeightsSHA256 == "" {
		return fmt.Errorf("%w: the summary is of a simulated release, bound to no model file", ErrFile)
	}
	pc, err := report.ModelConstants(r)
	if err != nil {
		return fmt.Errorf("%w: the model file gives no summary constants: %w", ErrFile, err)
	}
	b := pc.Binding
	want := Release{Mechanism: pc.Noise.Kind, NoiseScale: pc.Noise.Scale, NoiseDelta: pc.Noise.Delta, Dim: pc.Dim,
		N: pc.N, Lambda: pc.Lambda, Lipschitz: pc.Lipschitz, Smoothness: pc.Smoothness, Tolerance: s.Release.Tolerance,
		StandardizedOnRows: len(pc.NotCovered) > 0, WeightsSHA256: b.WeightsSHA256, ReleaseEpsilon: b.Epsilon, ReleaseDelta: b.Delta}
	if s.Release != want {
		g, _ := json.MarshalIndent(s.Release, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		return fmt.Errorf("%w: the summary is not of this model file's release: %s", ErrFile, firstDiff(g, w))
	}
	return nil
}

// Checked lists what Verify checks of a summary file, and CheckedModel
// what CheckModel adds; the certificate's not_verified list says what
// neither can.
var (
	Checked = []string{
		"the format, and that the file has no field beyond it, in the form stabpriv writes",
		"every derived constant (bound B, worst case, shift, grid, draws and their epsilon, slacks), rebuilt from the release's constants and the budget",
		"the certificate: the ledger (one charge per draw), the composition, the claim, the not-covered and not-verified lists",
		"every published bound and share, rebuilt from the draws; the draws in their ranges",
	}
	CheckedModel = "against the model file: it verifies, and the summary's weights SHA-256, the release's claim, noise, n, dim, lambda, loss constants and standardization equal the file's"
)
