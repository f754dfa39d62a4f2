package private

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/objpert"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// Verdict is the outcome of Verify for a model file that is consistent.
type Verdict int

const (
	// PrivateRelease: a valid private release, its claim verified.
	PrivateRelease Verdict = iota
	// NotPrivate: a valid file that makes no privacy claim about the table
	// (no mechanism; seeded noise whose seed is published; or features
	// standardized with statistics of the data, written in the file).
	NotPrivate
)

// ErrVerify is wrapped by every inconsistency Verify finds.
var ErrVerify = fmt.Errorf("%w: certificate does not verify", ErrModelFile)

// Verify checks a model file's claim from what it publishes, the way a
// third party would. From the published inputs of the release (the run
// constants, the mechanism, eps and delta, the noise source, the schema and
// the preprocessing's public constants) it rebuilds everything Fit would
// have written beside the weights: the run constants that follow from the
// loss (L_z, S_z, L, beta_s, mu, kappa = 1), the step of every pass from
// the schedule, the stability analysis and its route and Delta, the noise
// calibration, the not-covered list, the ledger, the split, and the
// weights' SHA-256. The file must equal the rebuilt one exactly, so no field
// (free text included) can carry anything else.
//
// It returns PrivateRelease for a valid private release, NotPrivate with
// the reason for a valid file that makes no claim about the table, and an
// error wrapping ErrVerify that names the inconsistencies otherwise.
//
// What a file cannot show is where it came from: weights replaced together
// with their hash, a seeded release relabelled secure, or settings other
// than those of the run are consistent forgeries. Verify checks a file's
// internal consistency, not its provenance.
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
	if objpert.Handles(c.Mechanism) {
		return verifyObjective(r) // objective.go
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	checkHeader(r, bad)
	if c.Run == nil {
		bad("the certificate has no run record")
		return 0, "", fmt.Errorf("%w: %w", ErrVerify, errors.Join(errs...))
	}
	run := *c.Run
	errs = append(errs, checkRun(&run, r)...)
	if len(errs) > 0 {
		// The rebuilt certificate would differ too; the specific reasons
		// say more.
		return 0, "", fmt.Errorf("%w: %w", ErrVerify, errors.Join(errs...))
	}
	want, err := rebuild(r, &run)
	if err != nil {
		return 0, "", fmt.Errorf("%w: %w", ErrVerify, err)
	}
	if diffs := diffJSON(want, r); len(diffs) > 0 {
		return 0, "", fmt.Errorf("%w: the file differs from the release its published constants give: %s", ErrVerify, diffs)
	}
	switch {
	case c.Source == perturb.SourceSeeded:
		return NotPrivate, fmt.Sprintf("the noise was drawn from a seeded generator whose seed (%d) is published: anyone can subtract it", *c.NoiseSeed), nil
	case !r.Preprocessing.Mode.inside():
		return NotPrivate, "the features were standardized with means and scales fitted on the training split, written in the file and not private: the claim covers the standardized rows, not the table", nil
	}
	return PrivateRelease, "", nil
}

// checkRun checks the run constants that follow from the loss and the
// settings, and those the model and the split fix.
func checkRun(run *trainer.Run, r *Released) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	loss, err := losses.ByName(run.Loss)
	if err != nil {
		return []error{err}
	}
	if run.Loss != r.Model.Loss || run.Task != loss.Task().String() {
		bad("the run's loss %s (%s) is not the model's %s", run.Loss, run.Task, r.Model.Loss)
	}
	if run.Kappa != 1 {
		bad("kappa = %v, but the preprocessing maps every row into the unit ball: kappa = 1", run.Kappa)
	}
	cons, err := loss.Constants(losses.Domain{Kappa: 1, Radius: run.Radius, LabelBound: run.LabelBound})
	if err != nil {
		bad("the loss has no constants on the run's domain: %v", err)
	} else if run.Lz != cons.Lz || run.Sz != cons.Sz || run.Convex != cons.Convex || run.L != cons.Lz || run.BetaS != cons.Sz {
		bad("loss constants L_z = %v, S_z = %v, L = %v, beta_s = %v, convex %v; the %s loss has L_z = %v, S_z = %v at kappa = 1", run.Lz, run.Sz, run.L, run.BetaS, run.Convex, run.Loss, cons.Lz, cons.Sz)
	}
	if run.LabelBound != r.Schema.LabelBound {
		bad("label bound %v in the run, %v in the schema", run.LabelBound, r.Schema.LabelBound)
	}
	if !(run.Lambda >= 0) || math.IsInf(run.Lambda, 0) || !(run.L1Ratio >= 0 && run.L1Ratio <= 1) || run.Mu != run.Lambda*(1-run.L1Ratio) {
		bad("lambda = %v, l1 ratio = %v, mu = %v: want mu = lambda (1 - l1 ratio)", run.Lambda, run.L1Ratio, run.Mu)
	}
	if run.K != r.Model.K || run.D != r.Model.D {
		bad("the run is %d x %d, the model %d x %d", run.K, run.D, r.Model.K, r.Model.D)
	}
	if run.N != r.Split.TrainRows || run.N < 1 {
		bad("the run has n = %d training rows, the split %d", run.N, r.Split.TrainRows)
	}
	if info := r.Partitions; info != nil {
		// A partitioned fit holds rows out, and assigns them to partitions,
		// by a hash of their positions: recomputed from the published shard
		// names and row counts.
		rows, train, sizes, err := partitionLayout(info.Shards, r.Split.Seed, r.Split.TestFrac, info.Count)
		switch {
		case err != nil:
			bad("partitions: %v", err)
		case rows != r.Split.Rows || train != r.Split.TrainRows || !slices.Equal(sizes, info.Sizes):
			bad("the shards %v give %d rows, %d for training, partition sizes %v; the file says %d, %d, %v", info.Shards, rows, train, sizes, r.Split.Rows, r.Split.TrainRows, info.Sizes)
		case train < info.Count:
			bad("%d partitions for %d training rows", info.Count, train)
		}
	} else if tr, err := trainRows(r.Split); err != nil || tr != r.Split.TrainRows {
		bad("split of %d rows at test fraction %v has %d training rows, the file says %d (%v)", r.Split.Rows, r.Split.TestFrac, tr, r.Split.TrainRows, err)
	}
	if r.Split.Seed != run.Seed || r.Split.Stratified {
		bad("split seed %d (stratified %v), run seed %d: a release splits by position with the run's seed", r.Split.Seed, r.Split.Stratified, run.Seed)
	}
	if run.Sampling != trainer.SamplingPermutation || run.UserModel || run.Tolerance != 0 ||
		run.Engine != trainer.Native.String() && run.Engine != trainer.Graph.String() {
		bad("sampling %q, engine %q, user model %v, tolerance %v: not a run the trainer certifies", run.Sampling, run.Engine, run.UserModel, run.Tolerance)
	}
	if r.AutoKnobs {
		if c := r.Certificate; c != nil {
			k, err := AutoKnobs(run.N, run.D, run.K, c.Mechanism, Budget{Epsilon: c.Epsilon, Delta: c.Delta})
			if err != nil {
				bad("automatic knobs: %v", err)
			} else if run.Lambda != k.Lambda || run.Clip != k.Clip || run.L1Ratio != 0 || run.Schedule != trainer.BoundedInverseT.String() {
				bad("the automatic knobs for n = %d, dim = %d, K = %d, %s at (%g, %g) are lambda = %v, clip %v, l1 ratio 0, bounded-inverse-t; the run has lambda = %v, clip %v, l1 ratio %v, %s",
					run.N, run.D, run.K, c.Mechanism, c.Epsilon, c.Delta, k.Lambda, k.Clip, run.Lambda, run.Clip, run.L1Ratio, run.Schedule)
			}
		}
	}
	if run.Batch < 1 || run.Batch > run.N || run.StepsPerPass != (run.N+run.Batch-1)/run.Batch || run.Passes < 1 || run.Passes > trainer.MaxPasses {
		bad("batch %d, %d steps per pass, %d passes for n = %d", run.Batch, run.StepsPerPass, run.Passes, run.N)
	} else if err := checkSteps(run); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// trainRows returns the number of training rows of a split.
func trainRows(s SplitInfo) (int, error) {
	if s.Rows < 1 || !check.HalfOpenUnit(s.TestFrac) {
		return 0, fmt.Errorf("%d rows, test fraction %v", s.Rows, s.TestFrac)
	}
	return s.Rows - int(math.Round(s.TestFrac*float64(s.Rows))), nil
}

// checkSteps recomputes the largest and smallest step of every pass from
// the schedule, as the trainer computes them.
func checkSteps(run *trainer.Run) error {
	beta := run.BetaS + run.Mu
	var step func(t int) float64
	switch run.Schedule {
	case trainer.Constant.String():
		step = func(int) float64 { return run.Eta }
	case trainer.InverseT.String():
		step = func(t int) float64 { return 1 / (run.Mu * float64(t)) }
	case trainer.BoundedInverseT.String():
		step = func(t int) float64 { return math.Min(1/(run.Mu*float64(t)), 1/beta) }
	default:
		return fmt.Errorf("schedule %q cannot be recomputed: a certified release uses constant, inverse-t or bounded-inverse-t", run.Schedule)
	}
	if len(run.PassMaxStep) != run.Passes || len(run.PassMinStep) != run.Passes {
		return fmt.Errorf("%d passes but %d and %d step records", run.Passes, len(run.PassMaxStep), len(run.PassMinStep))
	}
	if e := step(1); e != run.Eta || !(e > 0) || math.IsInf(e, 0) {
		return fmt.Errorf("first step %v, the %s schedule gives %v", run.Eta, run.Schedule, e)
	}
	m := run.StepsPerPass
	for j := range run.Passes {
		hi, lo := math.Inf(-1), math.Inf(1)
		for t := j*m + 1; t <= (j+1)*m; t++ {
			e := step(t)
			hi, lo = math.Max(hi, e), math.Min(lo, e)
		}
		if run.PassMaxStep[j] != hi || run.PassMinStep[j] != lo {
			return fmt.Errorf("pass %d steps in [%v, %v], the %s schedule gives [%v, %v]", j+1, run.PassMinStep[j], run.PassMaxStep[j], run.Schedule, lo, hi)
		}
	}
	return nil
}

// rebuild returns the model file Fit writes for the published inputs of r
// and its weights.
func rebuild(r *Released, run *trainer.Run) (*Released, error) {
	c := r.Certificate
	rep, err := stability.Analyze(run)
	if err != nil {
		return nil, fmt.Errorf("the run record does not analyze: %w", err)
	}
	sens, notes, err := perturb.FromReport(rep)
	if err != nil {
		return nil, err
	}
	cal, err := perturb.Calibrate(c.Mechanism, c.Epsilon, c.Delta, sens, len(r.Model.W))
	if err != nil {
		return nil, fmt.Errorf("the privacy parameters are invalid: %w", err)
	}
	task, err := r.task()
	if err != nil {
		return nil, err
	}
	p := *r.Preprocessing
	p.Map = preprocessingMap(p.Mode)
	budget := Budget{Epsilon: c.Epsilon, Delta: c.Delta}
	var cert *perturb.Certificate
	if info := r.Partitions; info != nil {
		terms, err := partitionTerms(*run, *info, run.Seed)
		if err != nil {
			return nil, err
		}
		if err := terms.check(rep, run.N); err != nil {
			return nil, err
		}
		all := append(partitionFitNotes(p.Mode, &p, task, r.Split.TestFrac), notes...)
		cert = perturb.NewCertificate(cal, sens, run, c.Source, append(all, terms.notes(rep)...))
		cert.Neighbouring = partitionNeighbours
		cert.Ledger = []perturb.Charge{partitionCharge(c.Mechanism, budget)}
	} else {
		cert = perturb.NewCertificate(cal, sens, run, c.Source, append(fitNotes(p.Mode, &p, task), notes...))
		cert.Neighbouring = tableNeighbours
		cert.Ledger = []perturb.Charge{releaseCharge(c.Mechanism, budget)}
	}
	cert.WeightsSHA256 = perturb.WeightsSHA256(r.Model.W)
	if c.Source == perturb.SourceSeeded {
		if c.NoiseSeed == nil {
			return nil, fmt.Errorf("a seeded release without its noise seed")
		}
		seed := *c.NoiseSeed
		cert.NoiseSeed = &seed
	}
	return &Released{
		Private:       cert.Private && p.Mode.inside(),
		Model:         r.Model,
		Certificate:   cert,
		Schema:        publicSchema(r.Schema),
		Preprocessing: &p,
		Stability:     rep,
		Split:         r.Split,
		AutoKnobs:     r.AutoKnobs,
		Partitions:    r.Partitions,
	}, nil
}

// diffJSON compares the model files of want and got and names the fields
// (top level and in the certificate and its run) that differ.
func diffJSON(want, got *Released) string {
	flat := func(r *Released) map[string]string {
		out := make(map[string]string)
		var top map[string]json.RawMessage
		b, _ := json.Marshal(modelFile{Format: ModelFormat, Released: r})
		_ = json.Unmarshal(b, &top)
		for k, v := range top {
			if k != "certificate" {
				out[k] = string(v)
				continue
			}
			var cert map[string]json.RawMessage
			_ = json.Unmarshal(v, &cert)
			for ck, cv := range cert {
				if ck != "run" {
					out["certificate."+ck] = string(cv)
					continue
				}
				var run map[string]json.RawMessage
				_ = json.Unmarshal(cv, &run)
				for rk, rv := range run {
					out["certificate.run."+rk] = string(rv)
				}
			}
		}
		return out
	}
	w, g := flat(want), flat(got)
	var keys []string
	for k, v := range w {
		if g[k] != v {
			keys = append(keys, k)
		}
	}
	for k := range g {
		if _, ok := w[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if len(keys) == 0 {
		return ""
	}
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += "; "
		}
		s += fmt.Sprintf("%s is %s, want %s", k, abbreviate(g[k]), abbreviate(w[k]))
	}
	return s
}

func abbreviate(s string) string {
	if s == "" {
		return "absent"
	}
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return s
}

// checkHeader checks what every certificate shares, whatever its
// mechanism: the format version, the weights' hash and a known noise
// source; bad collects the inconsistencies.
func checkHeader(r *Released, bad func(format string, args ...any)) {
	c := r.Certificate
	if c.Version != perturb.CertificateVersion {
		bad("certificate version %q, want %q", c.Version, perturb.CertificateVersion)
	}
	if h := perturb.WeightsSHA256(r.Model.W); h != c.WeightsSHA256 {
		bad("the weights' SHA-256 is %s, the certificate binds %s: the weights were altered", h, c.WeightsSHA256)
	}
	if c.Source != perturb.SourceSecure && c.Source != perturb.SourceSeeded {
		bad("noise source %q, want %q or %q", c.Source, perturb.SourceSecure, perturb.SourceSeeded)
	}
}
