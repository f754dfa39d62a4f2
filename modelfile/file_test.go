package modelfile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/fittest"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
	"gonum.org/v1/gonum/floats"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenFit is a reproducible release: seeded noise, a small table.
func goldenFit(t *testing.T, mech dp.Mechanism) *modelfile.Released {
	t.Helper()
	tab := fittest.Blobs(24, 2, []string{"neg", "pos"}, 9)
	schema := datasets.Schema{Label: "y", Classes: []string{"neg", "pos"}, Bounds: fittest.BoundsFor(tab, -2, 3)}
	r, err := private.Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 2}, private.Options{
		Mechanism: mech, TestFrac: 0.25, Seed: 4, Noise: perturb.Seeded(8),
		Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: 0.1}, Schedule: trainer.BoundedInverseT, Passes: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func encodeModel(t *testing.T, r *modelfile.Released) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestModelGolden pins the model file format (and with it the certificate
// format): a change of either shows here. Run with -update to accept one.
func TestModelGolden(t *testing.T) {
	got := encodeModel(t, goldenFit(t, perturb.Laplace))
	path := filepath.Join("testdata", "model.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("model file differs from %s (run go test -run TestModelGolden -update after a deliberate format change):\n%s", path, got)
	}
	r, err := modelfile.Read(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	if v, why, err := modelfile.Verify(r); err != nil || v != modelfile.NotPrivate || !strings.Contains(why, "seed (8) is published") {
		t.Errorf("golden file: %v %q %v", v, why, err)
	}
}

// TestModelRoundTrip writes and reads a model file: the same release.
func TestModelRoundTrip(t *testing.T) {
	r := goldenFit(t, perturb.Gamma)
	data := encodeModel(t, r)
	back, err := modelfile.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if again := encodeModel(t, back); !bytes.Equal(again, data) {
		t.Errorf("round trip changed the file:\n%s\n%s", data, again)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "m.json")
	if err := r.WriteFile(path, false); err != nil {
		t.Fatal(err)
	}
	if _, err := modelfile.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile(path, false); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a write without replace over a model file: %v, want fs.ErrExist", err)
	}
	if err := r.WriteFile(path, true); err != nil {
		t.Errorf("a write with replace: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "sub")); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

// tamper returns the model file of r with edit applied to its JSON, in
// the form Write gives when the edited document still decodes into a model
// file of this format (so that Verify's checks of the values are what the
// test reaches), else as edited.
func tamper(t *testing.T, data []byte, edit func(doc map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var file struct {
		Format string `json:"format"`
		modelfile.Released
	}
	if dec.Decode(&file) != nil || file.Format != modelfile.Format {
		return out
	}
	var canon bytes.Buffer
	if err := file.Released.Write(&canon); err != nil {
		return out
	}
	return canon.Bytes()
}

func cert(doc map[string]any) map[string]any { return doc["certificate"].(map[string]any) }

// TestVerifyTampered checks that Verify names every kind of tampering with
// a private release.
func TestVerifyTampered(t *testing.T) {
	tab, schema, err := datasets.DefaultTable()
	if err != nil {
		t.Fatal(err)
	}
	r, err := private.Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 1}, private.Options{Mechanism: perturb.Gamma, Auto: true, TestFrac: 0.2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	data := encodeModel(t, r)
	if v, _, err := modelfile.Verify(r); err != nil || v != modelfile.PrivateRelease {
		t.Fatalf("untouched: %v %v", v, err)
	}
	tests := []struct {
		name string
		edit func(doc map[string]any)
		want string
	}{
		{"weight altered", func(d map[string]any) {
			w := d["model"].(map[string]any)["w"].([]any)
			w[3] = w[3].(float64) + 1e-9
		}, "weights were altered"},
		{"epsilon raised", func(d map[string]any) { cert(d)["epsilon"] = 5.0 }, "automatic knobs"},
		{"automatic lambda raised", func(d map[string]any) { cert(d)["run"].(map[string]any)["lambda"] = 0.1 }, "automatic knobs"},
		{"epsilon negative", func(d map[string]any) { cert(d)["epsilon"] = -5.0 }, "invalid"},
		{"mechanism bogus", func(d map[string]any) { cert(d)["mechanism"] = "bogus" }, "invalid"},
		{"noise scale tiny", func(d map[string]any) { cert(d)["noise_scale"] = 1e-9 }, "noise_scale"},
		{"sensitivity lowered", func(d map[string]any) { cert(d)["l2_sensitivity"] = 0.001 }, "l2_sensitivity"},
		{"lambda raised", func(d map[string]any) { cert(d)["run"].(map[string]any)["lambda"] = 10.0 }, ""},
		{"n raised", func(d map[string]any) { cert(d)["run"].(map[string]any)["n"] = 1e6 }, "n = 1000000"},
		{"route renamed", func(d map[string]any) { cert(d)["sensitivity_route"] = "erm" }, "sensitivity_route"},
		{"ledger overspent", func(d map[string]any) {
			cert(d)["ledger"] = []any{map[string]any{"step": "x", "mechanism": "gamma", "epsilon": 0.5, "delta": 0.0}}
		}, "ledger"},
		{"private flag on a file flipped off", func(d map[string]any) { d["private"] = false }, "private is false"},
		{"source claimed seeded", func(d map[string]any) { cert(d)["source"] = perturb.SourceSeeded }, "noise seed"},
		// Forgeries that keep every recomputed number consistent with a
		// false claim: each must still be found.
		{"eps 100 relabelled 1 by scaling L_z", func(d map[string]any) {
			run := cert(d)["run"].(map[string]any)
			run["lz"], run["lipschitz"] = 0.01, 0.01
		}, "loss constants"},
		{"kappa zero", func(d map[string]any) { cert(d)["run"].(map[string]any)["kappa"] = 0.0 }, "kappa"},
		{"unknown schedule", func(d map[string]any) { cert(d)["run"].(map[string]any)["schedule"] = "weird" }, "schedule"},
		{"step records shrunk", func(d map[string]any) {
			run := cert(d)["run"].(map[string]any)
			run["pass_max_step"].([]any)[0] = 1e-9
		}, "pass 1 steps"},
		{"stability block altered", func(d map[string]any) { d["stability"].(map[string]any)["delta"] = 1e-9 }, "stability"},
		{"beta altered", func(d map[string]any) { cert(d)["beta"] = 1e-9 }, "certificate.beta"},
		{"split train rows", func(d map[string]any) { d["split"].(map[string]any)["train_rows"] = 7.0 }, "training rows"},
		{"notes on a private file", func(d map[string]any) { d["notes"] = []any{"row 17 has radius 14.2"} }, "notes"},
		{"not-covered text replaced", func(d map[string]any) { cert(d)["not_covered"] = []any{"mean radius of row 17 = 14.2"} }, "not_covered"},
		{"sampling text", func(d map[string]any) { cert(d)["run"].(map[string]any)["sampling"] = "row 17: 14.2" }, "sampling"},
		{"map text", func(d map[string]any) { d["preprocessing"].(map[string]any)["map"] = "row 17: 14.2" }, "preprocessing"},
		{"standardize without the warning", func(d map[string]any) {
			p := d["preprocessing"].(map[string]any)
			p["mode"], p["mean"], p["scale"] = "standardize", p["lo"], p["hi"]
			delete(p, "lo")
			delete(p, "hi")
		}, "not_covered"},
		{"version", func(d map[string]any) { cert(d)["version"] = "stabpriv-certificate/1" }, "version"},
	}
	for _, tt := range tests {
		bad := tamper(t, data, tt.edit)
		rr, err := modelfile.Read(bytes.NewReader(bad))
		if err == nil {
			_, _, err = modelfile.Verify(rr)
		}
		if err == nil || !errors.Is(err, modelfile.ErrFile) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want one wrapping modelfile.ErrFile and naming %q", tt.name, err, tt.want)
		}
	}
	// Structural damage is found by ReadModel.
	for name, edit := range map[string]func(map[string]any){
		"unknown field":      func(d map[string]any) { d["train_accuracy"] = 0.98 },
		"format":             func(d map[string]any) { d["format"] = "stabpriv-model/1" },
		"weights missing":    func(d map[string]any) { d["model"].(map[string]any)["w"] = []any{1.0} },
		"classes of another": func(d map[string]any) { d["schema"].(map[string]any)["classes"] = []any{"a", "b", "c"} },
		"bounds reversed": func(d map[string]any) {
			p := d["preprocessing"].(map[string]any)
			p["lo"], p["hi"] = p["hi"], p["lo"]
		},
	} {
		if _, err := modelfile.Read(bytes.NewReader(tamper(t, data, edit))); !errors.Is(err, modelfile.ErrFile) {
			t.Errorf("%s: err %v, want modelfile.ErrFile", name, err)
		}
	}
}

// TestPredict checks predictions on raw rows against the model applied to
// the preprocessed row, probabilities, and errors instead of panics.
func TestPredict(t *testing.T) {
	r := goldenFit(t, perturb.Gamma)
	x := []float64{0.3, -1.2}
	in := make([]float64, 3)
	if err := r.Preprocessing.Apply(in, x); err != nil {
		t.Fatal(err)
	}
	z := in[0]*r.Model.W[0] + in[1]*r.Model.W[1] + in[2]*r.Model.W[2]
	want := "neg"
	if z >= 0 {
		want = "pos"
	}
	got, err := r.Predict(x)
	if err != nil || got != want {
		t.Errorf("Predict = %q, %v, want %q", got, err, want)
	}
	p, err := r.PredictProba(x)
	if err != nil || len(p) != 2 || math.Abs(p[0]+p[1]-1) > 1e-15 || math.Abs(p[1]-1/(1+math.Exp(-z))) > 1e-15 {
		t.Errorf("PredictProba = %v, %v", p, err)
	}
	// A NaN is a missing cell: the middle of its feature's map.
	if _, err := r.Predict([]float64{math.NaN(), 0}); err != nil || !r.Preprocessing.Missing {
		t.Errorf("Predict with a missing cell: %v (missing %v)", err, r.Preprocessing.Missing)
	}
	for _, bad := range [][]float64{{1}, {1, 2, 3}, {math.Inf(1), 0}, {math.Inf(-1), 0}} {
		if _, err := r.Predict(bad); !errors.Is(err, datasets.ErrFormat) {
			t.Errorf("Predict(%v): %v, want datasets.ErrFormat", bad, err)
		}
	}
}

func TestVerifyNilAndVerdictNames(t *testing.T) {
	if _, _, err := modelfile.Verify(nil); !errors.Is(err, modelfile.ErrFile) {
		t.Errorf("Verify(nil): %v, want ErrFile", err)
	}
	if _, _, err := modelfile.Verify(&modelfile.Released{}); !errors.Is(err, modelfile.ErrFile) {
		t.Errorf("Verify of an empty file: %v, want ErrFile", err)
	}
	for v, want := range map[modelfile.Verdict]string{modelfile.PrivateRelease: "private release", modelfile.NotPrivate: "not private", 7: "Verdict(7)"} {
		if got := v.String(); got != want {
			t.Errorf("%d: %q, want %q", int(v), got, want)
		}
	}
}

// forge returns the model file of r with its weights replaced by edit's and
// the hash recomputed: a consistent forgery but for the weights' support.
func forge(t *testing.T, r *modelfile.Released, edit func(w []float64)) *modelfile.Released {
	t.Helper()
	data := encodeModel(t, r)
	back, err := modelfile.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	edit(back.Model.W)
	back.Certificate.WeightsSHA256 = dp.WeightsSHA256(back.Model.W)
	return back
}

// TestVerifySupport: weights that the declared noise cannot produce are
// refused, even with a recomputed hash: weights a million times larger
// (every method, secure and seeded), weights off the lattice of the secure
// sampler (laplace, gamma, objective), and a seeded gamma release's
// weights pasted into a secure file.
func TestVerifySupport(t *testing.T) {
	tab, schema, err := datasets.DefaultTable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mech := range []dp.Mechanism{perturb.Laplace, perturb.Gamma, perturb.AnalyticGaussian, perturb.Objective, perturb.AMP} {
		budget := dp.Budget{Epsilon: 1}
		if !mech.Pure() {
			budget.Delta = 1e-5
		}
		fit := func(noise perturb.Source) *modelfile.Released {
			r, err := private.Fit(context.Background(), tab, schema, budget, private.Options{Mechanism: mech, Auto: true, TestFrac: 0.2, Seed: 1, Noise: noise})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		secure, seeded := fit(nil), fit(perturb.Seeded(5))
		if v, _, err := modelfile.Verify(secure); err != nil || v != modelfile.PrivateRelease {
			t.Fatalf("%s: a secure release: %v %v", mech, v, err)
		}
		for name, r := range map[string]*modelfile.Released{"secure": secure, "seeded": seeded} {
			huge := forge(t, r, func(w []float64) { floats.Scale(1e6, w) })
			if _, _, err := modelfile.Verify(huge); !errors.Is(err, modelfile.ErrVerify) || !strings.Contains(err.Error(), "exceeds") {
				t.Errorf("%s, %s: weights times 1e6: %v", mech, name, err)
			}
		}
		if mech == perturb.AnalyticGaussian || mech == perturb.AMP {
			continue // the Gaussian sampler's lattice is below the rounding of float64 at these scales
		}
		off := forge(t, secure, func(w []float64) {
			for i := range w {
				w[i] = math.Nextafter(w[i], math.Inf(1))
			}
		})
		if _, _, err := modelfile.Verify(off); !errors.Is(err, modelfile.ErrVerify) || !strings.Contains(err.Error(), "lattice") {
			t.Errorf("%s: weights one ulp off the lattice: %v", mech, err)
		}
		if mech == perturb.Gamma {
			pasted := forge(t, secure, func(w []float64) { copy(w, seeded.Model.W) })
			if _, _, err := modelfile.Verify(pasted); !errors.Is(err, modelfile.ErrVerify) {
				t.Errorf("a seeded release's weights in a secure file: %v", err)
			}
		}
	}
}

// TestReadCanonical: a file whose values are those of a release but whose
// bytes are not what Write writes (a key twice or in another case, extra
// digits of a weight, other spacing, data after the document) is refused,
// since those bytes could carry what no check of the values sees.
func TestReadCanonical(t *testing.T) {
	tab, schema, err := datasets.DefaultTable()
	if err != nil {
		t.Fatal(err)
	}
	r, err := private.Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 1}, private.Options{Mechanism: perturb.Gamma, Auto: true, TestFrac: 0.2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	data := string(encodeModel(t, r))
	if _, err := modelfile.Read(strings.NewReader(data)); err != nil {
		t.Fatalf("the file as written: %v", err)
	}
	w0 := strconv.FormatFloat(r.Model.W[0], 'g', -1, 64)
	for name, edit := range map[string]func(string) string{
		"key in another case": func(s string) string {
			return strings.Replace(s, `"model": {`, `"model": {"W": [1, 2, 3], `, 1)
		},
		"label key twice": func(s string) string {
			return strings.Replace(s, `"label": "`, `"LABEL": "row 17 = malignant", "label": "`, 1)
		},
		"private twice": func(s string) string {
			return strings.Replace(s, "{\n", "{\"private\": false,\n", 1)
		},
		"extra digits": func(s string) string {
			return strings.Replace(s, w0+",", w0+"0000000000000000017,", 1)
		},
		"other spacing": func(s string) string { return strings.Replace(s, "  ", "   ", 1) },
		"data after":    func(s string) string { return s + "{}\n" },
	} {
		bad := edit(data)
		if bad == data {
			t.Fatalf("%s: the edit changed nothing", name)
		}
		if _, err := modelfile.Read(strings.NewReader(bad)); !errors.Is(err, modelfile.ErrFile) {
			t.Errorf("%s: Read %v, want ErrFile", name, err)
		}
	}
}
