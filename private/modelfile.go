package private

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/stability"
)

// ModelFormat names the format of the model files this package writes.
const ModelFormat = "stabpriv-model/2"

// modelFile is the JSON document of a model file: the format and the
// fields of Released.
type modelFile struct {
	Format string `json:"format"`
	*Released
}

// WriteModel writes r as a model file (JSON, ModelFormat). Diagnostics are
// never written.
func (r *Released) WriteModel(w io.Writer) error {
	data, err := json.MarshalIndent(modelFile{Format: ModelFormat, Released: r}, "", "  ")
	if err != nil {
		return fmt.Errorf("private: encoding the model: %w", err)
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// WriteModelFile writes r to path with WriteModel, creating the parent
// directories. The file appears whole or not at all: it is written to a
// temporary file in the same directory and renamed.
func (r *Released) WriteModelFile(path string) (err error) {
	var buf bytes.Buffer
	if err := r.WriteModel(&buf); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".stabpriv-model-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// ReadModel reads a model file and checks its structure: the format, a
// model whose shape matches the preprocessing and the classes, finite
// weights, and no field beyond those this package writes. It does not verify the certificate (Verify does). Errors wrap
// ErrModelFile.
func ReadModel(rd io.Reader) (*Released, error) {
	dec := json.NewDecoder(rd)
	// A field this package does not write could carry anything, a
	// statistic of the data included: such a file is refused.
	dec.DisallowUnknownFields()
	var doc struct {
		Format string `json:"format"`
		Released
	}
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: not JSON: %w", ErrModelFile, err)
	}
	if doc.Format != ModelFormat {
		return nil, fmt.Errorf("%w: format %q, want %q (a file of another program or version)", ErrModelFile, doc.Format, ModelFormat)
	}
	r := &doc.Released
	if err := r.checkShape(); err != nil {
		return nil, err
	}
	return r, nil
}

// ReadModelFile reads the model file at path with ReadModel.
func ReadModelFile(path string) (*Released, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("private: %w", err)
	}
	defer f.Close()
	r, err := ReadModel(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// task returns the task of the model's loss.
func (r *Released) task() (losses.Task, error) {
	l, err := losses.ByName(r.Model.Loss)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrModelFile, err)
	}
	return l.Task(), nil
}

// checkShape checks that the parts of r fit together.
func (r *Released) checkShape() error {
	m := r.Model
	if m == nil {
		return fmt.Errorf("%w: no model", ErrModelFile)
	}
	if m.K < 1 || m.D < 1 || len(m.W) != m.K*m.D {
		return fmt.Errorf("%w: model is %d x %d with %d weights", ErrModelFile, m.K, m.D, len(m.W))
	}
	for i, v := range m.W {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: weight %d is %v", ErrModelFile, i, v)
		}
	}
	if r.Preprocessing == nil {
		return fmt.Errorf("%w: no preprocessing", ErrModelFile)
	}
	if err := r.Preprocessing.check(); err != nil {
		return err
	}
	if d := r.Preprocessing.Dim(); d != m.D {
		return fmt.Errorf("%w: the preprocessing gives %d inputs, the model has %d", ErrModelFile, d, m.D)
	}
	task, err := r.task()
	if err != nil {
		return err
	}
	if task.String() != m.Task.String() {
		return fmt.Errorf("%w: loss %s is %v but the model says %v", ErrModelFile, m.Loss, task, m.Task)
	}
	k := len(r.Schema.Classes)
	switch {
	case task == losses.Binary && (k != 2 || m.K != 1),
		task == losses.Multiclass && (k < 2 || m.K != k),
		task == losses.Regression && (k != 0 || m.K != 1):
		return fmt.Errorf("%w: %v model with %d outputs and %d classes", ErrModelFile, task, m.K, k)
	}
	return nil
}

// Verdict is the outcome of Verify for a model file that is consistent.
type Verdict int

const (
	// PrivateRelease: a valid private release, its claim verified.
	PrivateRelease Verdict = iota
	// NotPrivate: a valid file that makes no privacy claim (no mechanism,
	// or seeded noise whose seed is published).
	NotPrivate
)

// ErrVerify is wrapped by every inconsistency Verify finds.
var ErrVerify = fmt.Errorf("%w: certificate does not verify", ErrModelFile)

// relTol is the relative tolerance of Verify's recomputations: the numbers
// are recomputed by the same code from the same inputs, so they agree to
// rounding.
const relTol = 1e-12

// Verify checks a model file's claim from its published contents: the
// weights against the certificate's SHA-256, the sensitivity against the
// stability route recomputed from the published run constants, the noise
// scale against the calibration recomputed from (mechanism, eps, delta,
// Delta), the ranges of every parameter, the ledger against the claim, and
// the private flags against the noise source. It returns PrivateRelease
// for a valid private release, NotPrivate (with the reason) for a valid
// file without a claim, and an error wrapping ErrVerify that names every
// inconsistency found otherwise.
func Verify(r *Released) (Verdict, string, error) {
	if err := r.checkShape(); err != nil {
		return 0, "", err
	}
	c := r.Certificate
	if c == nil {
		if r.Private {
			return 0, "", fmt.Errorf("%w: marked private but holds no certificate", ErrVerify)
		}
		return NotPrivate, "no mechanism: the weights are released as trained, without a privacy guarantee", nil
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Version != perturb.CertificateVersion {
		bad("certificate version %q, want %q", c.Version, perturb.CertificateVersion)
	}
	if c.Dim != len(r.Model.W) {
		bad("the certificate covers %d weights, the model has %d", c.Dim, len(r.Model.W))
	}
	if h := perturb.WeightsSHA256(r.Model.W); h != c.WeightsSHA256 {
		bad("the weights' SHA-256 is %s, the certificate binds %s: the weights were altered", h, c.WeightsSHA256)
	}
	secure := c.Source == perturb.SourceSecure
	if c.Private != secure || r.Private != secure {
		bad("private flags (file %v, certificate %v) disagree with the noise source %q", r.Private, c.Private, c.Source)
	}
	if c.Run == nil {
		bad("the certificate has no run record")
	} else {
		run := c.Run
		if run.D != r.Model.D || run.K != r.Model.K || run.Loss != r.Model.Loss {
			bad("the run record (%s, %d x %d) does not describe the model (%s, %d x %d)", run.Loss, run.K, run.D, r.Model.Loss, r.Model.K, r.Model.D)
		}
		rep, err := stability.Analyze(run)
		switch {
		case err != nil:
			bad("the run record does not analyze: %v", err)
		case rep.Chosen == 0:
			bad("no sensitivity route applies to the published run constants")
		default:
			if rep.Chosen.String() != c.SensitivityRoute {
				bad("the published constants give route %v, the certificate names %q", rep.Chosen, c.SensitivityRoute)
			}
			if !near(rep.Delta, c.L2Sensitivity) {
				bad("the published constants give Delta = %.17g, the certificate claims %.17g", rep.Delta, c.L2Sensitivity)
			}
		}
	}
	cal, err := perturb.Calibrate(c.Mechanism, c.Epsilon, c.Delta, perturb.Sensitivity{L2: c.L2Sensitivity}, c.Dim)
	if err != nil {
		bad("the privacy parameters are invalid: %v", err)
	} else {
		if !near(cal.Scale, c.NoiseScale) {
			bad("%s at eps = %g, delta = %g, Delta = %g needs noise scale %.17g, the certificate states %.17g", c.Mechanism, c.Epsilon, c.Delta, c.L2Sensitivity, cal.Scale, c.NoiseScale)
		}
		if !near(cal.L1, c.L1Sensitivity) {
			bad("L1 sensitivity %.17g, want %.17g", c.L1Sensitivity, cal.L1)
		}
		if c.NoiseScaleName != c.Mechanism.ScaleName() {
			bad("noise scale named %q, want %q", c.NoiseScaleName, c.Mechanism.ScaleName())
		}
	}
	var eps, delta float64
	for _, l := range c.Ledger {
		if !(l.Epsilon > 0) || !(l.Delta >= 0) {
			bad("ledger entry %q spends eps = %v, delta = %v", l.Step, l.Epsilon, l.Delta)
		}
		eps += l.Epsilon
		delta += l.Delta
	}
	if len(c.Ledger) == 0 {
		bad("the certificate has no ledger")
	} else if !near(eps, c.Epsilon) || !near(delta, c.Delta) && delta != c.Delta {
		bad("the ledger spends eps = %g, delta = %g, the claim is (%g, %g)", eps, delta, c.Epsilon, c.Delta)
	}
	if len(errs) > 0 {
		return 0, "", fmt.Errorf("%w: %w", ErrVerify, errors.Join(errs...))
	}
	if !secure {
		why := fmt.Sprintf("the noise came from the %q source", c.Source)
		if c.NoiseSeed != nil {
			why = fmt.Sprintf("the noise was drawn from a seeded generator whose seed (%d) is published: anyone can subtract it", *c.NoiseSeed)
		}
		return NotPrivate, why, nil
	}
	return PrivateRelease, "", nil
}

// near reports whether a and b agree to relTol.
func near(a, b float64) bool {
	return a == b || math.Abs(a-b) <= relTol*math.Max(math.Abs(a), math.Abs(b))
}
