package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/pdp/publish"
	"github.com/stabpriv/stabpriv/perturb"
)

// TestPDPPublish: pdp --publish-epsilon writes summary.dp.json beside the
// confidential files, readable by all while they stay owner-only; certify
// verifies it (exit 0 for the secure source, 3 for a seeded one) and
// refuses a tampered copy (exit 1).
func TestPDPPublish(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	stdout, err := pdpRun(t, "pdp", "--lambda", "0.1", "--standardize", "none", "--exact-top", "0", "--publish-epsilon", "2", "--publish-delta", "1e-6", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CONFIDENTIAL", "DP summary", "PUBLISHABLE", "quantile 0.5: at least", "level 0.1"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	for _, bad := range []string{"among the 0 exact rows", "maximum: at least"} {
		if strings.Contains(stdout, bad) {
			t.Errorf("output has %q:\n%s", bad, stdout)
		}
	}
	if !strings.Contains(stdout, "maximum: not bounded at this budget") {
		t.Errorf("output does not say the maximum is not bounded:\n%s", stdout)
	}
	path := filepath.Join(dir, publish.SummaryFile)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("%s has mode %v, want 0644 (publishable)", publish.SummaryFile, st.Mode().Perm())
	}
	for _, name := range publish.ReportFiles {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600 (confidential)", name, st, err)
		}
	}
	out, err := pdpRun(t, "certify", path)
	if code := exitCode(err); code != 0 || !strings.Contains(out, "VERIFIED DP SUMMARY") {
		t.Fatalf("certify: exit %d (%v)\n%s", code, err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := publish.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(b), `"epsilon_at_most": `, `"epsilon_at_most": 0.00`, 1)
	if bad == string(b) || s.Quantiles[0].EpsilonAtMost == 0 {
		t.Fatal("the tampering did not change the file")
	}
	tampered := filepath.Join(t.TempDir(), "tampered.json")
	if err := os.WriteFile(tampered, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := pdpRun(t, "certify", tampered); exitCode(err) != 5 || !errors.Is(err, publish.ErrFile) {
		t.Errorf("certify of a tampered summary: exit %d, %v", exitCode(err), err)
	}

	seededDir := filepath.Join(t.TempDir(), "seeded")
	if _, err := pdpRun(t, "pdp", "--lambda", "0.1", "--standardize", "none", "--exact-top", "0", "--publish-epsilon", "1", "--publish-seed", "4", "--out", seededDir); err != nil {
		t.Fatal(err)
	}
	if _, err := pdpRun(t, "certify", filepath.Join(seededDir, publish.SummaryFile)); exitCode(err) != 3 {
		t.Errorf("certify of a seeded summary: exit %d (%v), want 3", exitCode(err), err)
	}
}

// TestPDPPublishModel: the summary of a model file's release verifies,
// carries the file's weights SHA-256 and claim, and certify --model checks
// them against that file (exit 0) and refuses another model file (exit
// 5); a model standardized on its training rows is refused before any
// work (exit 2, nothing written).
func TestPDPPublishModel(t *testing.T) {
	data := modelCSV(t, 200, 4)
	model := trainModel(t, data, "--standardize", "none", "--mechanism", "gaussian-analytic", "--delta", "1e-5",
		"--lambda", "0.5", "--l1-ratio", "0", "--noise", "seeded", "--noise-seed", "1")
	dir := filepath.Join(t.TempDir(), "out")
	if _, err := pdpRun(t, "pdp", "--model", model, "--data", data, "--exact-top", "0", "--publish-epsilon", "4", "--out", dir); err != nil {
		t.Fatal(err)
	}
	s, err := publish.ReadFile(filepath.Join(dir, publish.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := publish.Verify(s); err != nil {
		t.Fatal(err)
	}
	if s.Release.N != 200*4/5 || s.Release.Lambda != 0.5 {
		t.Errorf("summary of n = %d, lambda = %g", s.Release.N, s.Release.Lambda)
	}
	r, err := modelfile.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	if s.Release.WeightsSHA256 != r.Certificate.WeightsSHA256 || s.Release.ReleaseEpsilon != r.Certificate.Epsilon {
		t.Errorf("summary bound to %q (eps %g), the model file's weights are %q (eps %g)", s.Release.WeightsSHA256, s.Release.ReleaseEpsilon, r.Certificate.WeightsSHA256, r.Certificate.Epsilon)
	}
	path := filepath.Join(dir, publish.SummaryFile)
	for _, args := range [][]string{{"certify", path, "--model", model}, {"certify", "--model", model, path}} {
		out, err := pdpRun(t, args...)
		if exitCode(err) != 0 || !strings.Contains(out, "against the model file") || !strings.Contains(out, "Not verified") || !strings.Contains(out, r.Certificate.WeightsSHA256) {
			t.Errorf("%v: exit %d (%v)\n%s", args, exitCode(err), err, out)
		}
	}
	other := trainModel(t, data, "--standardize", "none", "--mechanism", "gaussian-analytic", "--delta", "1e-5",
		"--lambda", "0.5", "--l1-ratio", "0", "--noise", "seeded", "--noise-seed", "2")
	if _, err := pdpRun(t, "certify", path, "--model", other); exitCode(err) != 5 || !strings.Contains(err.Error(), "weights_sha256") {
		t.Errorf("certify against another model file: exit %d, %v", exitCode(err), err)
	}
	if _, err := pdpRun(t, "certify", model, "--model", model); exitCode(err) != 2 {
		t.Errorf("certify model.json --model: exit %d, %v, want a usage error", exitCode(err), err)
	}

	std := trainModel(t, data, "--standardize", "train", "--mechanism", "gaussian-analytic", "--delta", "1e-5",
		"--lambda", "0.5", "--l1-ratio", "0", "--noise", "seeded", "--noise-seed", "1")
	stdDir := filepath.Join(t.TempDir(), "std")
	_, err = pdpRun(t, "pdp", "--model", std, "--data", data, "--exact-top", "0", "--publish-epsilon", "4", "--out", stdDir)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "--standardize none") {
		t.Errorf("pdp --model of a standardized model with --publish-epsilon: exit %d, %v, want a usage error naming the fix", exitCode(err), err)
	}
	if _, serr := os.Stat(stdDir); !os.IsNotExist(serr) {
		t.Errorf("%s was created", stdDir)
	}
}

// TestCertifyStandardizedSummary: a summary file whose rows were
// standardized on themselves (written by the library, since pdp refuses to)
// verifies as NOT PRIVATE FOR THE TABLE: exit 3, never PUBLISHABLE.
func TestCertifyStandardizedSummary(t *testing.T) {
	p := &pdp.Publishable{Public: pdp.PublicConstants{N: 50, Lambda: 0.5, Lipschitz: 1, Smoothness: 0.25, Tolerance: 1e-10, Dim: 3,
		Noise: pdp.PrivacyLoss{Kind: perturb.AnalyticGaussian, Scale: 0.3, Delta: 1e-6}}, GradNorms: make([]float64, 50)}
	s, err := publish.Summarize(p, publish.Config{Epsilon: 1, StandardizedOnRows: true}, perturb.Secure(), nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), publish.SummaryFile)
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := pdpRun(t, "certify", path)
	if exitCode(err) != 3 || !strings.Contains(out, "NOT PRIVATE FOR THE TABLE") || strings.Contains(out, "PUBLISHABLE") || strings.Contains(out, "VERIFIED DP SUMMARY") {
		t.Errorf("certify of a standardized summary: exit %d (%v)\n%s", exitCode(err), err, out)
	}
}

// TestPDPPublishBadInput: a bad budget, or a release with no bound on a
// row's influence, is a usage error before any work, and nothing is
// written.
func TestPDPPublishBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--publish-epsilon", "0"}, "eps = 0"},
		{[]string{"--publish-epsilon", "-1"}, "eps = -1"},
		{[]string{"--publish-epsilon", "NaN"}, "eps = NaN"},
		{[]string{"--publish-epsilon", "1", "--publish-delta", "1"}, "delta = 1"},
		{[]string{"--publish-epsilon", "1", "--publish-delta", "-0.1"}, "delta = -0.1"},
		{[]string{"--publish-delta", "1e-6"}, "applies with --publish-epsilon"},
		{[]string{"--publish-epsilon", "1", "--publish-levels", "0.1,x"}, "not a number"},
		{[]string{"--publish-epsilon", "1", "--publish-levels", "-1"}, "level -1"},
		{[]string{"--publish-epsilon", "1", "--publish-beta", "0"}, "beta = 0"},
		{[]string{"--publish-epsilon", "1", "--lambda", "0", "--sigma", "1"}, "lambda > 0"},
		{[]string{"--publish-epsilon", "1", "--standardize", "none", "--bias", "false"}, "not enforced"},
		{[]string{"--publish-epsilon", "1"}, "--standardize train"},
		{[]string{"--publish-epsilon", "1", "--standardize", "train"}, "--standardize none"},
	} {
		dir := filepath.Join(t.TempDir(), "out")
		_, err := pdpRun(t, append(append([]string{"pdp"}, tc.args...), "--out", dir)...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v (exit %d), want a usage error with %q", tc.args, err, exitCode(err), tc.want)
		}
		if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
			t.Errorf("%v: %s was created", tc.args, dir)
		}
	}
}

// TestPDPPublishUselessWarns: at pdp's default lambda (n lambda = 0.46) the
// summary bounds nothing, and pdp warns on stderr with the n lambda a
// useful summary needs at that budget.
func TestPDPPublishUselessWarns(t *testing.T) {
	var out, errw bytes.Buffer
	dir := filepath.Join(t.TempDir(), "out")
	if err := run([]string{"pdp", "--standardize", "none", "--exact-top", "0", "--publish-epsilon", "1", "--publish-seed", "1", "--out", dir}, &out, &errw); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errw.String(), "a useful summary needs n lambda >= ") || !strings.Contains(errw.String(), "here n lambda = 0.455") {
		t.Errorf("stderr:\n%s", errw.String())
	}
}
