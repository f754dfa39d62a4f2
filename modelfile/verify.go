package modelfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/privbounds"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/release/autoknobs"
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

// String names the verdict.
func (v Verdict) String() string {
	switch v {
	case PrivateRelease:
		return "private release"
	case NotPrivate:
		return "not private"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// ErrVerify is wrapped by every inconsistency Verify finds.
var ErrVerify = fmt.Errorf("%w: certificate does not verify", ErrFile)

// Verify checks a model file's claim from what it publishes, the way a
// third party would. From the published inputs of the release (the run
// constants, the mechanism, eps and delta, the noise source, the schema and
// the preprocessing's public constants) it rebuilds everything the fit
// would have written beside the weights: the release method rebuilds the
// certificate and the stability analysis (release.Verifier.Rebuild: for
// output perturbation the loss constants, the step of every pass, the
// route and Delta and the noise calibration; for objective perturbation and
// AMP the calibration of the published problem), and Verify adds the
// pipeline's not-covered notes, the neighbouring relation, the split, the
// partition layout of a partitioned fit, and the weights' SHA-256. The file
// must equal the rebuilt one exactly, so no field (free text included) can
// carry anything else. Beside the rebuild it checks what a release can
// publish at all (checkHeader): no -0 among the weights and the principal
// directions, a claim in the range of dp.Budget.Validate with delta below
// 1/n (dp.Budget.CheckRows), and a ledger whose charges add up to at most
// the claim in exact arithmetic (dp.Budget.Covers).
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
	if r == nil {
		return 0, "", fmt.Errorf("%w: no model file", ErrFile)
	}
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
	checkHeader(r, bad)
	m, err := release.LookupVerifier(c.Mechanism)
	if err != nil {
		bad("%v", err)
	}
	if c.Run == nil {
		bad("the certificate has no run record")
	} else {
		checkPipeline(r, bad)
		checkWork(c.Run, bad)
	}
	var part *partitioned
	if len(errs) == 0 && r.Partitions != nil {
		part = checkPartitions(r, bad)
	}
	var sel *selected
	if len(errs) == 0 && r.Selection != nil {
		sel = checkSelection(r, bad)
	}
	if len(errs) > 0 {
		// The rebuilt file would differ too; the specific reasons say more.
		return 0, "", fmt.Errorf("%w: %w", ErrVerify, errors.Join(errs...))
	}
	want, err := rebuild(r, m, part, sel)
	if err != nil {
		return 0, "", fmt.Errorf("%w: %w", ErrVerify, err)
	}
	if diffs := diffJSON(want, r); len(diffs) > 0 && (part == nil || r.Partitions.group() > 1 || diffJSON(withGroupCitation(want), r) != "") && diffJSON(withFormerNotes(want), r) != "" {
		return 0, "", fmt.Errorf("%w: the file differs from the release its published constants give: %s", ErrVerify, diffs)
	}
	pre, _ := preSteps(r) // checked by rebuild
	if err := m.CheckWeights(sel.runCertificate(releasePart(c, pre)), publicOf(r), r.Model.W); err != nil {
		return 0, "", fmt.Errorf("%w: %w", ErrVerify, err)
	}
	switch {
	case c.Source == perturb.SourceSeeded:
		return NotPrivate, fmt.Sprintf("the noise was drawn from a seeded generator whose seed (%d) is published: anyone can subtract it", *c.NoiseSeed), nil
	case !r.Preprocessing.Mode.Inside():
		return NotPrivate, "the features were standardized with means and scales fitted on the training split, written in the file and not private: the claim covers the standardized rows, not the table", nil
	}
	return PrivateRelease, "", nil
}

// checkHeader checks what every certificate shares, whatever its
// mechanism: the format version, the weights' hash, no -0 among the
// weights and the principal directions (a release writes every zero +0,
// dp.PositiveZeros), a known noise source, a claim in the range of
// dp.Budget.Validate with delta below 1/n for the n units of privacy of the
// training rows (dp.Budget.CheckRows), and a ledger whose charges add up
// to at most the claim in exact arithmetic (dp.Budget.Covers); bad
// collects the inconsistencies.
func checkHeader(r *Released, bad func(format string, args ...any)) {
	c := r.Certificate
	if c.Version != dp.CertificateVersion {
		bad("certificate version %q, want %q", c.Version, dp.CertificateVersion)
	}
	if h := dp.WeightsSHA256(r.Model.W); h != c.WeightsSHA256 {
		bad("the weights' SHA-256 is %s, the certificate binds %s: the weights were altered", h, c.WeightsSHA256)
	}
	if i := dp.NegativeZero(r.Model.W); i >= 0 {
		bad("weight %d is -0, which no release writes (every zero is +0): its sign bit could carry what the mechanism did not choose", i)
	}
	if pca := r.Preprocessing.PCA; pca != nil {
		for k, v := range pca.V {
			if i := dp.NegativeZero(v); i >= 0 {
				bad("entry %d of principal direction %d is -0, which no release writes (every zero is +0)", i, k)
				break
			}
		}
	}
	claim := dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}
	if err := claim.Validate(); err != nil {
		bad("the claim: %v", err)
	} else {
		perID := r.Partitions != nil && r.Partitions.PrivacyID != ""
		n, unit := Units(r.Split.TrainRows, perID, r.Partitions.group())
		if err := claim.CheckRows(n, unit); err != nil {
			bad("the claim: %v", err)
		}
	}
	if err := claim.Covers(c.Ledger); err != nil {
		bad("%v", err)
	}
	if c.Source != perturb.SourceSecure && c.Source != perturb.SourceSeeded {
		bad("noise source %q, want %q or %q", c.Source, perturb.SourceSecure, perturb.SourceSeeded)
	}
}

// checkPipeline checks the run constants that the model, the schema, the
// preprocessing and the split fix, whatever the method: the loss and the
// shape of the model, kappa = 1 (every row map ends in the unit ball), no
// text read under principal components (a fit with them reads every column
// as numbers: privbounds.CentreStepPCA), the label bound, n and the seed of
// the split.
func checkPipeline(r *Released, bad func(format string, args ...any)) {
	run := r.Certificate.Run
	if run.Loss != r.Model.Loss || run.K != r.Model.K || run.D != r.Model.D {
		bad("the run (%s, %d x %d) is not the model (%s, %d x %d)", run.Loss, run.K, run.D, r.Model.Loss, r.Model.K, r.Model.D)
	}
	if p := r.Preprocessing; p.Estimated {
		if p.Mode != preprocess.Bounds || r.Partitions != nil {
			bad("bounds estimated for the preprocessing %s of a partitioned fit %v: only a single fit with bounds estimates them", p.Mode, r.Partitions != nil)
		}
		numeric := p.NumericFeatures()
		for j := range p.Lo {
			if p.Log > 0 {
				if !privbounds.OnCentreGrid(p.Lo[j], p.Hi[j]) {
					bad("feature %q: the estimated constants [%v, %v] of the log scale are not m - s and m + s for a centre m and a spread s of the estimate's grid", numeric[j], p.Lo[j], p.Hi[j])
				}
				continue
			}
			if !privbounds.OnGrid(p.Lo[j]) || !privbounds.OnGrid(p.Hi[j]) {
				bad("feature %q: the estimated bounds [%v, %v] are not on the estimate's grid (+-2^e, %d <= e <= %d)", numeric[j], p.Lo[j], p.Hi[j], privbounds.MinExp, privbounds.MaxExp)
			}
		}
	}
	if p := r.Preprocessing; p.Log != 0 {
		lo, hi, w := privbounds.PublicRange()
		switch {
		case r.Partitions != nil:
			bad("the log scale in a partitioned fit: only a single fit without declared bounds reads the rows on it")
		case p.Estimated && p.Log != privbounds.HalfWidth:
			bad("the log scale of estimated centres has the half-width %d, not %v", privbounds.HalfWidth, p.Log)
		case !p.Estimated && (p.Log != w || slices.ContainsFunc(p.Lo, func(v float64) bool { return v != lo }) || slices.ContainsFunc(p.Hi, func(v float64) bool { return v != hi })):
			bad("the log scale without estimated centres has the public constants [%v, %v] for every column and the half-width %v (privbounds.PublicRange), not %v to %v and %v", lo, hi, w, p.Lo, p.Hi, p.Log)
		}
	}
	if r.Preprocessing.PCA != nil && r.Partitions != nil {
		bad("private principal directions in a partitioned fit: only a single fit computes them")
	}
	if p := r.Preprocessing; p.PCA != nil && (p.Text || slices.ContainsFunc(p.Categories, func(c datasets.Categorical) bool { return c.Hash > 0 })) {
		bad("private principal directions with text cells read as missing or hashed text columns: a fit with them reads every column as numbers")
	}
	switch stump := r.Certificate.Mechanism == perturb.Stump; {
	case r.Preprocessing.Stump != stump:
		bad("the preprocessing's stump map is %v for the mechanism %s: a stump, and only a stump, reads the rows [z, 1]", r.Preprocessing.Stump, r.Certificate.Mechanism)
	case stump && (run.Kappa != 0 || r.Partitions != nil):
		bad("a stump with kappa = %v (its rows are not scaled into the unit ball: kappa 0) or partitions (%v)", run.Kappa, r.Partitions != nil)
	case !stump && run.Kappa != 1:
		bad("kappa = %v, but the preprocessing maps every row into the unit ball: kappa = 1", run.Kappa)
	}
	if run.LabelBound != r.Schema.LabelBound {
		bad("label bound %v in the run, %v in the schema", run.LabelBound, r.Schema.LabelBound)
	}
	if want := runRows(r); run.N != want || run.N < 1 {
		bad("the run has n = %d training rows, the split and the selection %d", run.N, want)
	}
	if r.Partitions == nil {
		if tr, err := trainRows(r.Split); err != nil || tr != r.Split.TrainRows {
			bad("split of %d rows at test fraction %v has %d training rows, the file says %d (%v)", r.Split.Rows, r.Split.TestFrac, tr, r.Split.TrainRows, err)
		}
	}
	if r.Split.Seed != run.Seed || r.Split.Stratified {
		bad("split seed %d (stratified %v), run seed %d: a release splits by position with the run's seed", r.Split.Seed, r.Split.Stratified, run.Seed)
	}
}

// MaxVerifySteps bounds the number of SGD steps (passes times steps per
// pass) of a run whose file Verify checks: the stability analysis, which
// Verify repeats, evaluates the growth recursion step by step, and a file
// that claims a longer run is refused rather than analysed for minutes.
// The trainer runs no longer one (trainer.MaxSteps).
const MaxVerifySteps = trainer.MaxSteps

// checkWork refuses a run record whose analysis would be longer than a
// training run of MaxVerifySteps steps: more passes than the trainer runs,
// a batch outside [1, n], or too many steps.
func checkWork(run *trainer.Run, bad func(format string, args ...any)) {
	if run.Batch == 0 && run.Passes == 0 {
		return // a run without SGD steps (objective perturbation, AMP)
	}
	switch {
	case run.Passes < 1 || run.Passes > trainer.MaxPasses:
		bad("%d passes, want 1 to %d", run.Passes, trainer.MaxPasses)
	case run.N < 1 || run.Batch < 1 || run.Batch > run.N:
		bad("batch %d for n = %d", run.Batch, run.N)
	case uint64(run.Passes)*uint64((run.N+run.Batch-1)/run.Batch) > MaxVerifySteps:
		bad("%d passes of %d steps: more than the %d steps a verification analyses", run.Passes, (run.N+run.Batch-1)/run.Batch, uint64(MaxVerifySteps))
	}
}

// rebuild returns the model file that a fit writes for the published
// inputs of r and its weights.
func rebuild(r *Released, m release.Verifier, part *partitioned, sel *selected) (*Released, error) {
	c := r.Certificate
	task, err := r.task()
	if err != nil {
		return nil, err
	}
	pre, err := preSteps(r)
	if err != nil {
		return nil, err
	}
	p := *r.Preprocessing
	p.Words = p.Explain()
	skeleton := &Released{Preprocessing: &p, Split: r.Split, Partitions: r.Partitions}
	pub := publicOf(r)
	if pub.Notes, err = skeleton.PipelineNotes(task); err != nil {
		return nil, err
	}
	if part != nil {
		if pub.Extra, err = PartitionNotes(part.Partitioned, r.Partitions, r.Split.Seed); err != nil {
			return nil, err
		}
		pub.Sensitivity, pub.SensitivityNotes = &part.sens, part.notes
	}
	rc := releasePart(c, pre)
	if sel != nil {
		pub.AutoScale = sel.setting.Scale
		pub.Extra = append(pub.Extra, sel.rec.Assumptions()...)
	}
	cert, rep, err := m.Rebuild(sel.runCertificate(rc), pub)
	if err != nil {
		return nil, err
	}
	if sel != nil {
		if err := sel.rec.Finish(cert); err != nil {
			return nil, err
		}
		if err := sel.rec.FinishSelected(cert, dp.Budget{Epsilon: rc.Epsilon, Delta: rc.Delta}); err != nil {
			return nil, err
		}
	}
	cert.Neighbouring = skeleton.Neighbours()
	if part != nil {
		if err := AccountPartition(cert, c.Mechanism, dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}); err != nil {
			return nil, err
		}
	}
	if err := composePre(cert, &p, dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}, pre); err != nil {
		return nil, err
	}
	cert.WeightsSHA256 = dp.WeightsSHA256(r.Model.W)
	return &Released{
		Private:       cert.Private && p.Mode.Inside(),
		Model:         r.Model,
		Certificate:   cert,
		Schema:        PublicSchema(r.Schema),
		Preprocessing: &p,
		Stability:     rep,
		Split:         r.Split,
		AutoKnobs:     r.AutoKnobs,
		Partitions:    r.Partitions,
		Selection:     r.Selection,
	}, nil
}

// publicOf returns the published inputs of r's release that its method
// reads beside the certificate (without the notes). Per privacy ID the
// automatic knobs are the rule's at the group's sensitivity
// (autoknobs.GroupScale of c).
func publicOf(r *Released) release.Public {
	pub := release.Public{Classes: len(r.Schema.Classes), K: r.Model.K, D: r.Model.D, Auto: r.AutoKnobs}
	if r.Partitions != nil && r.AutoKnobs {
		pub.AutoScale = autoknobs.GroupScale(r.Partitions.group())
	}
	return pub
}

// withGroupCitation returns a copy of the partitioned release want whose
// route notes cite the group step (stability.GroupCitation) after
// stability.PartitionedCitation, as every partitioned file written before
// the step was cited only for units of more than one row did: such a file
// is the same release, with a note that names one step too many, and
// verifies. Verify applies it to units of one row only (rows, or privacy
// IDs with c = 1): a file of larger units already cites the step once.
func withGroupCitation(want *Released) *Released {
	return withReplaced(want, perturb.FormerNote{Now: stability.PartitionedCitation, Then: stability.PartitionedCitation + "; " + stability.GroupCitation})
}

// withFormerNotes returns a copy of want whose notes on the secure
// Gaussian noise are those of the releases before the exact sampler
// (perturb.FormerNotes): such a file, its noise drawn by
// google/differential-privacy's sampler, verifies.
func withFormerNotes(want *Released) *Released {
	return withReplaced(want, perturb.FormerNotes...)
}

// withReplaced returns a copy of want with every text Now of its JSON
// replaced by Then (want itself if the copy cannot be made).
func withReplaced(want *Released, rs ...perturb.FormerNote) *Released {
	b, err := json.Marshal(want)
	if err != nil {
		return want
	}
	quoted := func(s string) []byte {
		q, _ := json.Marshal(s)
		return q[1 : len(q)-1]
	}
	for _, r := range rs {
		b = bytes.ReplaceAll(b, quoted(r.Now), quoted(r.Then))
	}
	var old Released
	if err := json.Unmarshal(b, &old); err != nil {
		return want
	}
	return &old
}

// diffJSON compares the model files of want and got and names the fields
// (top level and in the certificate and its run) that differ.
func diffJSON(want, got *Released) string {
	flat := func(r *Released) map[string]string {
		out := make(map[string]string)
		var top map[string]json.RawMessage
		b, _ := json.Marshal(modelFile{Format: Format, Released: r})
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

// Checked lists what Verify checks of a model file, and Unchecked what it
// cannot: certify prints both, and the README states them.
var (
	Checked = []string{
		"the format, and that the file has no field beyond it and is byte for byte what a run writes for its values (spacing, key order, the spelling of numbers and strings)",
		"the shape: K x D weights, all finite, for the preprocessing's inputs and the declared classes",
		"the weights' SHA-256 against the certificate, and no -0 among the weights and the principal directions (a release writes every zero +0)",
		"the claim: eps from 2^-50 to 100 and delta in [0, 1) below 1/n for the n training rows (privacy IDs, per privacy ID); the ledger's charges adding up to at most the claim in exact arithmetic",
		"the certificate, rebuilt by the release method from the published inputs: the run constants that follow from the loss (kappa = 1), the step of every pass, the stability routes and Delta (output perturbation) or the calibration of the published problem (objective perturbation, AMP), the noise scale, the ledger, the not-covered notes and the neighbouring relation",
		"the split: the training rows from the row count, the test fraction and the seed; for a partitioned fit, the partition sizes from the shards' names and row counts, and the partitioned sensitivity",
		"the automatic knobs, when the file says they chose the settings",
		"privately estimated feature bounds: their charge present, first in the ledger and positive (leaving the release a positive part of eps), every bound a point of the estimate's grid (on the log scale, every (lo, hi) a centre's and a spread's (m - s, m + s) on that grid, the half-width 3 and the permute-and-flip charge) and equal to the certificate's list, and the release rebuilt at the rest of the budget; the log scale without estimated centres only with the public constants (m = 0, s = 1, half-width 32), and never in a partitioned file",
		"private principal directions: their charge (Analyze Gauss) present in the ledger after the bounds' and before the release's, with positive eps and delta, leaving the release a positive part of both; the directions present in the preprocessing, of the right shape (k x the width of the rows they apply to, 1 <= k <= that width) and orthonormal; their SHA-256 equal to the certificate's; and the release rebuilt at the rest of the budget",
		"a private selection of the setting: its plan (candidates, fractions, the law of the number of runs, the sizes of the parts, whether it tuned) recomputed from the split, the model's shape and the budget, the chosen setting's mechanism and knobs, and its ledger",
		"a decision stump: the stump map (the per-feature map and the bias, no unit-ball map) exactly for the mechanism stump, and the weights a member of the public class (one feature weight +1 or -1, zeros, the bias -s t for a threshold t of the grid of 1023, or of 63 for a certificate that names that earlier grid; for K classes, that of class b on the grid of 255, its negation for class a, -1 on the bias for the others), bit for bit as the mechanism writes them",
		"the support of the noise: a secure release's weights on the lattice its sampler rounds to (laplace, gamma, objective; the Gaussian samplers' lattice is finer than float64 at usual scales), and every release's norm within the bound on the trained weights plus a noise norm exceeded with probability below 2^-63",
	}
	Unchecked = []string{
		"provenance: a file has no signature, so weights replaced together with their hash (and within the support), private principal directions replaced together with theirs (any orthonormal directions are in the support), a seeded Gaussian release relabelled secure, or settings other than the run's are consistent forgeries",
		"the amounts charged for estimated bounds and for private principal directions: every point of the bounds' grid and every orthonormal set of directions is in the support at any budget, so only the charges' presence, order and positivity are checked, not that the bounds or the directions were computed at the amounts the ledger states",
		"the names: the label, the class names and their order (which class is +1), the feature names and the preprocessing's bounds are as the file says; nothing binds them to the release (an edit changes what the model predicts, not the privacy claim about its weights)",
		"that the classes, declared bounds and settings were declared without looking at the rows: the claim assumes it (estimated bounds are covered by the claim)",
	}
)
