package main

import (
	"encoding/json"
	"errors"
	"github.com/stabpriv/stabpriv/trainer"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/stability"
)

// trainFile runs train with args and --out into a temporary file, and
// returns stdout and the decoded model file.
func trainFile(t *testing.T, args ...string) (string, *modelFile) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.json")
	stdout, _, err := call(t, append([]string{"train", "--log-level", "error", "--out", path}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc modelFile
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("model file: %v", err)
	}
	return stdout, &doc
}

// The embedded data: n = 455 training rows; the default lambda = 1e-3 and
// l1 ratio = 0.15 give mu = 8.5e-4.
const defaultN, defaultMu = 455, 1e-3 * 0.85

func TestTrainPrivate(t *testing.T) {
	// The trained weights of the schedule a private run picks by default.
	_, plain := trainFile(t, "--schedule", "bounded-inverse-t")
	tests := []struct {
		mech  string
		args  []string
		delta float64
		scale string
	}{
		{"laplace", nil, 0, "b"},
		{"gamma", nil, 0, "theta"},
		{"gaussian", []string{"--epsilon", "0.5", "--delta", "1e-5"}, 1e-5, "sigma"},
		{"gaussian-analytic", []string{"--delta", "1e-6"}, 1e-6, "sigma"},
	}
	for _, tt := range tests {
		t.Run(tt.mech, func(t *testing.T) {
			stdout, doc := trainFile(t, append([]string{"--mechanism", tt.mech, "--noise", "seeded"}, tt.args...)...)
			for _, want := range []string{
				"schedule: bounded-inverse-t, chosen for --mechanism " + tt.mech,
				"route strongly-convex-sgd",
				"private release",
				"seeded: not for release (seed 1)",
				"test accuracy of the private model: ",
				"noise scale   " + tt.scale + " = ",
				"do not publish",
			} {
				if !strings.Contains(stdout, want) {
					t.Errorf("output lacks %q:\n%s", want, stdout)
				}
			}
			// The norm of the noise drawn would place the trained weights on
			// a known sphere around the released ones.
			for _, leak := range []string{"noise norm", "||w|| ="} {
				if strings.Contains(stdout, leak) {
					t.Errorf("output shows %q:\n%s", leak, stdout)
				}
			}
			c := doc.Certificate
			if !doc.Private || c == nil {
				t.Fatalf("private %v, certificate %v", doc.Private, c)
			}
			eps := 1.0
			if tt.mech == "gaussian" {
				eps = 0.5
			}
			if string(c.Mechanism) != tt.mech || c.Epsilon != eps || c.Delta != tt.delta || c.Source != perturb.SourceSeeded || c.NoiseScaleName != tt.scale {
				t.Errorf("certificate %s eps %v delta %v source %q scale %s", c.Mechanism, c.Epsilon, c.Delta, c.Source, c.NoiseScaleName)
			}
			// Route 4 with the bounded inverse-t steps: 2L/(mu b ceil(n/b)).
			if want := 2 / (defaultMu * defaultN); math.Abs(c.L2Sensitivity-want) > 1e-9*want || c.SensitivityRoute != "strongly-convex-sgd" {
				t.Errorf("L2 %v by %q, want %v by strongly-convex-sgd", c.L2Sensitivity, c.SensitivityRoute, want)
			}
			if c.Run == nil || c.Run.N != defaultN || c.Run.Schedule != "bounded-inverse-t" || c.Run.Stats != (trainer.Stats{}) {
				t.Errorf("certificate run %+v", c.Run)
			}
			if doc.Run == nil || doc.Run.Stats != (trainer.Stats{}) {
				t.Errorf("the model file's run record shows statistics of the trained weights: %+v", doc.Run)
			}
			text := strings.Join(c.Assumptions, "\n")
			for _, want := range []string{"fitted on the training split", "kappa = 1 holds", "neighbouring runs share the permutations", "withholds the objective"} {
				if !strings.Contains(text, want) {
					t.Errorf("certificate assumptions lack %q:\n%s", want, text)
				}
			}
			if doc.Stability == nil || doc.Stability.Chosen != stability.RouteStronglyConvexSGD {
				t.Errorf("stability report %+v", doc.Stability)
			}
			if len(doc.Model.W) != len(plain.Model.W) || slices.Equal(doc.Model.W, plain.Model.W) {
				t.Fatalf("model file weights %v, trained weights %v: want a noisy copy", doc.Model.W, plain.Model.W)
			}
			for i, v := range doc.Model.W {
				if v == plain.Model.W[i] {
					t.Errorf("weight %d = %v is the trained weight", i, v)
				}
			}
		})
	}
}

// TestTrainPrivateSchedule checks that the user's --schedule or --step
// is kept, and that the release follows the route they give.
func TestTrainPrivateSchedule(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		schedule string
		route    string
	}{
		{"constant schedule", []string{"--schedule", "constant"}, "constant", "strongly-convex-sgd"},
		{"constant step", []string{"--step", "1"}, "constant", "strongly-convex-sgd"},
		{"mu = 0 keeps the constant step", []string{"--l1-ratio", "1"}, "constant", "convex-sgd"},
		{"tolerance, full batches", []string{"--lambda", "0.1", "--tolerance", "0.01", "--batch", "455", "--passes", "100"}, "bounded-inverse-t", "erm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, doc := trainFile(t, append([]string{"--mechanism", "gamma", "--noise", "seeded"}, tt.args...)...)
			// The message promises the strongly convex route: it is not
			// shown when a tolerance makes the erm route the one used.
			if auto := strings.Contains(stdout, "chosen for --mechanism"); auto != (tt.schedule == "bounded-inverse-t" && tt.route == "strongly-convex-sgd") {
				t.Errorf("schedule message shown: %v:\n%s", auto, stdout)
			}
			if hint := strings.Contains(stdout, "mu = 0, so no schedule contracts"); hint != (tt.route == "convex-sgd") {
				t.Errorf("mu = 0 message shown: %v:\n%s", hint, stdout)
			}
			c := doc.Certificate
			if c == nil || c.Run.Schedule != tt.schedule || c.SensitivityRoute != tt.route {
				t.Fatalf("certificate %+v", c)
			}
		})
	}
}

func TestTrainNotPrivate(t *testing.T) {
	stdout, doc := trainFile(t)
	if !strings.Contains(stdout, "not private: --mechanism none") || strings.Contains(stdout, "private release") {
		t.Errorf("output:\n%s", stdout)
	}
	if doc.Private || doc.Certificate != nil || doc.Run.Schedule != "constant" {
		t.Errorf("private %v, certificate %v, run %+v", doc.Private, doc.Certificate, doc.Run)
	}
	if !slices.ContainsFunc(doc.Notes, func(n string) bool { return strings.HasPrefix(n, "not private") }) {
		t.Errorf("notes do not say the model is not private: %q", doc.Notes)
	}
	// The stability analysis is reported also without a release.
	if doc.Stability == nil || len(doc.Stability.Routes) != len(stability.Routes) {
		t.Errorf("stability report %+v", doc.Stability)
	}
}

func TestTrainNoRoute(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		reasons []string
	}{
		{"mu = 0, step above 2/beta_s", []string{"--lambda", "0", "--step", "10"},
			[]string{"erm not applicable: mu", "theorem7 not applicable: mu", "convex-sgd not applicable: step 10", "strongly-convex-sgd not applicable: mu"}},
		{"inverse-t starts at 1/mu", []string{"--schedule", "inverse-t"},
			[]string{"erm not applicable: no convergence tolerance", "theorem7 not applicable: no convergence tolerance", "convex-sgd not applicable: step", "strongly-convex-sgd not applicable: step"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "model.json")
			args := append([]string{"train", "--log-level", "error", "--mechanism", "laplace", "--noise", "seeded", "--out", path}, tt.args...)
			stdout, _, err := call(t, args...)
			if err == nil {
				t.Fatal("no error")
			}
			if code := exitCode(err); code != 1 {
				t.Errorf("exit code %d, want 1: %v", code, err)
			}
			if !errors.Is(err, perturb.ErrSensitivity) || !errors.Is(err, stability.ErrNoRoute) {
				t.Errorf("error %v does not wrap ErrSensitivity and ErrNoRoute", err)
			}
			for _, want := range tt.reasons {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not say %q:\n%v", want, err)
				}
			}
			if !strings.Contains(stdout, "no route applies") || strings.Contains(stdout, "private release") {
				t.Errorf("output:\n%s", stdout)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a model file was written: %v", err)
			}
		})
	}
}

func TestPrivacyUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"unknown mechanism", []string{"--mechanism", "exponential"}, `--mechanism "exponential"`},
		{"zero eps", []string{"--mechanism", "gamma", "--epsilon", "0"}, "invalid epsilon"},
		{"negative eps", []string{"--mechanism", "gamma", "--epsilon", "-1"}, "invalid epsilon"},
		{"NaN eps", []string{"--mechanism", "laplace", "--epsilon", "NaN"}, "invalid epsilon"},
		{"infinite eps", []string{"--mechanism", "laplace", "--epsilon", "Inf"}, "invalid epsilon"},
		{"negative delta", []string{"--mechanism", "gaussian-analytic", "--delta", "-0.1"}, "want in [0, 1)"},
		{"delta 1", []string{"--mechanism", "gaussian-analytic", "--delta", "1"}, "want in [0, 1)"},
		{"delta with laplace", []string{"--mechanism", "laplace", "--delta", "1e-5"}, "leave --delta at 0"},
		{"delta with gamma", []string{"--mechanism", "gamma", "--delta", "1e-5"}, "leave --delta at 0"},
		{"gaussian without delta", []string{"--mechanism", "gaussian", "--epsilon", "0.5"}, "need --delta in (0, 1)"},
		{"analytic without delta", []string{"--mechanism", "gaussian-analytic"}, "need --delta in (0, 1)"},
		{"classical gaussian eps 1", []string{"--mechanism", "gaussian", "--delta", "1e-5"}, "gaussian-analytic"},
		{"unknown noise", []string{"--mechanism", "gamma", "--noise", "urandom"}, `--noise "urandom"`},
		{"eps without mechanism", []string{"--epsilon", "2"}, "--epsilon applies to a private release"},
		{"seeded noise without mechanism", []string{"--noise", "seeded"}, "--noise applies to a private release"},
		{"negative tolerance", []string{"--tolerance", "-1"}, "tolerance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "model.json")
			_, _, err := call(t, append([]string{"train", "--log-level", "error", "--out", path}, tt.args...)...)
			if err == nil {
				t.Fatal("no error")
			}
			if code := exitCode(err); code != 2 {
				t.Errorf("exit code %d, want 2 (usage): %v", code, err)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a model file was written: %v", err)
			}
		})
	}
}

// TestTrainPrivateSecure releases with the default secure source.
func TestTrainPrivateSecure(t *testing.T) {
	stdout, doc := trainFile(t, "--mechanism", "gaussian-analytic", "--delta", "1e-5")
	if c := doc.Certificate; c == nil || c.Source != perturb.SourceSecure {
		t.Fatalf("certificate %+v", c)
	}
	if strings.Contains(stdout, "not for release") {
		t.Errorf("secure release says not for release:\n%s", stdout)
	}
}

// TestTrainStandardizeNone checks --standardize none: no statistic of the
// data is fitted or written (the model file has no standardizer and no note
// about standardization), rows are still mapped into the unit ball, and the
// release still follows the stability route; a bad value is a usage error.
func TestTrainStandardizeNone(t *testing.T) {
	stdout, doc := trainFile(t, "--standardize", "none", "--lambda", "0.03", "--mechanism", "gamma", "--noise", "seeded")
	if doc.Preprocessing.Standardizer != nil {
		t.Errorf("standardizer written: %+v", doc.Preprocessing.Standardizer)
	}
	text := strings.Join(doc.Certificate.Assumptions, "\n")
	if strings.Contains(text, "standardized") || !strings.Contains(text, "kappa = 1 holds") {
		t.Errorf("certificate assumptions:\n%s", text)
	}
	if strings.Contains(stdout, "the standardization fitted on the training split is not private") {
		t.Errorf("output warns of a standardization that did not happen:\n%s", stdout)
	}
	if doc.Certificate.SensitivityRoute != "strongly-convex-sgd" {
		t.Errorf("route %q", doc.Certificate.SensitivityRoute)
	}
	if _, _, err := call(t, "train", "--standardize", "robust"); exitCode(err) != 2 {
		t.Errorf("--standardize robust: exit %d (%v), want 2", exitCode(err), err)
	}
}

// TestTrainInputChecks checks refusals that come before any training: a
// label bound with a loss that has no use for it (usage error), a directory
// given as the data file or as the model file (runtime errors that say so).
func TestTrainInputChecks(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"label bound with logistic", []string{"train", "--label-bound", "1"}, 2, "--label-bound applies to regression losses"},
		{"data is a directory", []string{"train", "--data", dir, "--label", "y"}, 1, "is a directory, not a CSV file"},
		{"out is a directory", []string{"train", "--out", dir}, 1, "is a directory; give a file name"},
	} {
		_, _, err := call(t, c.args...)
		if code := exitCode(err); code != c.code || err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: exit %d, error %v; want exit %d and %q", c.name, code, err, c.code, c.msg)
		}
	}
}
