package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/accountant"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/release/dpsgd"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestCLIDPSGDKnobs trains --mechanism dp-sgd with its own knobs (expected
// batch, passes, clipping norm, constant step, averaging), which the file
// records and certify verifies (exit 0); an edited noise multiplier or step
// count is refused (exit 5), and an SGD knob that DP-SGD does not take is
// refused before any row is read (exit 2), naming the knobs it takes.
func TestCLIDPSGDKnobs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	base := []string{"train", "--mechanism", "dp-sgd", "--epsilon", "1", "--delta", "1e-6"}
	args := append(base, "--batch", "64", "--passes", "3", "--clip", "0.5", "--out", path)
	if _, _, err := call(t, args...); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	stdout, _, err := call(t, "certify", path)
	if code := exitCode(err); code != 0 || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
		t.Fatalf("certify: exit %d (%v)\n%s", code, err, stdout)
	}
	// The noise scale reads sigma C, with sigma and C named apart.
	if !strings.Contains(stdout, "sigma C (noise multiplier sigma = ") || !strings.Contains(stdout, ", clip C = 0.5)") {
		t.Errorf("certify does not name sigma and C apart:\n%s", stdout)
	}
	// pdp analyses output perturbation only: a usage error that says so.
	if _, _, err := call(t, "pdp", "--model", path, "--data", filepath.Join("..", "..", "datasets", "data", "wdbc.csv"), "--out", filepath.Join(dir, "pdp")); exitCode(err) != 2 || !strings.Contains(err.Error(), "pdp analyses output perturbation, not dp-sgd") {
		t.Errorf("pdp on a dp-sgd model: exit %d (%v), want 2 naming output perturbation", exitCode(err), err)
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, knob := range []string{`"passes": 3,`, `"batch": 64,`, `"clip": 0.5,`, `"steps": 24,`} {
		if !strings.Contains(string(orig), knob) {
			t.Errorf("the file lacks %s", knob)
		}
	}
	if strings.Contains(string(orig), `"auto_knobs": true`) {
		t.Error("the user's knobs are recorded as the automatic ones")
	}
	for _, tt := range []struct{ from, to string }{
		{`"noise_multiplier": `, `"noise_multiplier": 0.5, "x": `},
		{`"steps": 24,`, `"steps": 12,`},
		{`"clip": 0.5,`, `"clip": 0.25,`},
	} {
		bad := strings.Replace(string(orig), tt.from, tt.to, 1)
		if bad == string(orig) {
			t.Fatalf("pattern %q not in the file", tt.from)
		}
		_, _, err := call(t, "certify", writeFile(t, "bad.json", bad))
		if code := exitCode(err); code != 5 {
			t.Errorf("edited %q: certify exit %d (%v), want 5", tt.to, code, err)
		}
	}

	// The constant step and the average are taken too; a file of the
	// automatic knobs (no knob given) still verifies.
	for _, extra := range [][]string{
		{"--step", "2", "--schedule", "constant", "--average"},
		{},
	} {
		p := filepath.Join(t.TempDir(), "m.json")
		if _, _, err := call(t, append(append(base, extra...), "--out", p)...); err != nil {
			t.Fatalf("%v: %v", extra, err)
		}
		if _, _, err := call(t, "certify", p); exitCode(err) != 0 {
			t.Errorf("%v: certify: %v", extra, err)
		}
	}

	for _, flag := range [][]string{{"--engine", "graph"}, {"--dropout", "0.5"}, {"--partitions", "2"}} {
		_, _, err := call(t, append(append(base, flag...), "--out", filepath.Join(dir, "no.json"))...)
		want := "--" + flag[0][2:] + " does not apply to --mechanism dp-sgd, which takes --passes, --batch, --step, --schedule, --clip, --average"
		if code := exitCode(err); code != 2 || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: exit %d (%v), want 2 and %q", flag, code, err, want)
		}
	}
}

// TestCLIDPSGDAccountants checks the accountant a dp-sgd file records: a
// file of the RDP accountant (testdata/older/dpsgd-rdp-v2.json, written by
// the release before the PLD one with the command below) still certifies
// (a seeded release: exit 3, a valid file) and refuses an edited noise
// multiplier (exit 5); the same command now releases by the PLD
// accountant, with a smaller noise multiplier, and certifies.
func TestCLIDPSGDAccountants(t *testing.T) {
	older := filepath.Join("testdata", "older", "dpsgd-rdp-v2.json")
	orig, err := os.ReadFile(older)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(orig), `"accountant": "RDP of the Poisson-subsampled Gaussian`) {
		t.Fatal("the older file does not name the RDP accountant")
	}
	if _, _, err := call(t, "certify", older); exitCode(err) != 3 {
		t.Errorf("certify the RDP file: exit %d (%v), want 3 (valid, seeded)", exitCode(err), err)
	}
	bad := strings.Replace(string(orig), `"noise_multiplier": `, `"noise_multiplier": 1.5, "x": `, 1)
	if _, _, err := call(t, "certify", writeFile(t, "bad.json", bad)); exitCode(err) != 5 {
		t.Errorf("edited RDP file: exit %d (%v), want 5", exitCode(err), err)
	}
	path := filepath.Join(t.TempDir(), "m.json")
	if _, stderr, err := call(t, "train", "--seed", "3", "--test-frac", "0.2", "--noise", "seeded", "--noise-seed", "11",
		"--mechanism", "dp-sgd", "--epsilon", "1", "--delta", "1e-5", "--out", path); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	now, err := modelfile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	then, err := modelfile.ReadFile(older)
	if err != nil {
		t.Fatal(err)
	}
	n, o := now.Certificate.Run.DPSGD, then.Certificate.Run.DPSGD
	if n.Accountant != dpsgd.PLDAccountant || n.Steps != o.Steps || n.SampleRate != trainer.PoissonRate(398, 20) || o.SampleRate != 20.0/398 || !(n.NoiseMultiplier < o.NoiseMultiplier) {
		t.Errorf("the PLD release: %q, sigma %v, T %d; the RDP file's sigma %v, T %d", n.Accountant, n.NoiseMultiplier, n.Steps, o.NoiseMultiplier, o.Steps)
	}
	if _, _, err := call(t, "certify", path); exitCode(err) != 3 {
		t.Errorf("certify the PLD file: exit %d (%v), want 3", exitCode(err), err)
	}
	t.Logf("RDP sigma %v, PLD sigma %v (%d steps at q = %v)", o.NoiseMultiplier, n.NoiseMultiplier, n.Steps, n.SampleRate)
}

// TestCLIDPSGDUnderstatedEpsilon edits the informational add/remove eps
// of the pinned dp-sgd file (testdata/pinned/dpsgd-auto.json, a seeded
// release: exit 3) consistently (its replace-one consequence and the
// assumption that states them too): lowered by 1e-8 of it, another
// build's rounding, the file still certifies; lowered by 5e-7, more than
// any build's rounding, certify refuses it naming the eps (exit 5),
// although the claim itself is unchanged.
func TestCLIDPSGDUnderstatedEpsilon(t *testing.T) {
	pinned := filepath.Join("testdata", "pinned", "dpsgd-auto.json")
	for _, tc := range []struct {
		by   float64
		exit int
	}{{1e-8, 3}, {5e-7, 5}} {
		r, err := modelfile.ReadFile(pinned)
		if err != nil {
			t.Fatal(err)
		}
		rec := r.Certificate.Run.DPSGD
		eps := rec.AddRemoveEpsilon * (1 - tc.by)
		rep := accountant.Guarantee{Epsilon: eps, Delta: rec.AddRemoveDelta}.ReplaceOne()
		a := &r.Certificate.Assumptions[0]
		for _, v := range [][2]float64{{rec.AddRemoveEpsilon, eps}, {rec.ReplaceOneEpsilon, rep.Epsilon}, {rec.ReplaceOneDelta, rep.Delta}} {
			from, to := fmt.Sprint(v[0]), fmt.Sprint(v[1])
			if !strings.Contains(*a, from) {
				t.Fatalf("the assumption does not state %s: %s", from, *a)
			}
			*a = strings.ReplaceAll(*a, from, to)
		}
		rec.AddRemoveEpsilon, rec.ReplaceOneEpsilon, rec.ReplaceOneDelta = eps, rep.Epsilon, rep.Delta
		path := filepath.Join(t.TempDir(), "m.json")
		if err := r.WriteFile(path, false); err != nil {
			t.Fatal(err)
		}
		_, _, err = call(t, "certify", path)
		if exitCode(err) != tc.exit || tc.exit == 5 && !strings.Contains(err.Error(), "add/remove eps ") {
			t.Errorf("eps lowered by %g of it: certify exit %d (%v), want %d", tc.by, exitCode(err), err, tc.exit)
		}
	}
}

// TestCLIDPSGDAccountantSwapped relabels a dp-sgd file's accountant:
// the pinned PLD release named RDP (whose noise multiplier the RDP
// accountant would not accept at that budget) and the older RDP file
// named PLD. certify refuses both (exit 5), naming the file's noise
// multiplier beside the one its named accountant gives.
func TestCLIDPSGDAccountantSwapped(t *testing.T) {
	read := func(name string) (string, string) {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		i := strings.Index(string(b), `"accountant": "`)
		if i < 0 {
			t.Fatalf("%s names no accountant", name)
		}
		j := i + len(`"accountant": "`)
		return string(b), string(b)[i : j+strings.IndexByte(string(b)[j:], '"')+1]
	}
	pld, pldName := read("pinned/dpsgd-auto.json")
	rdp, rdpName := read("older/dpsgd-rdp-v2.json")
	for _, c := range []struct{ name, forged string }{
		{"PLD named RDP", strings.Replace(pld, pldName, rdpName, 1)},
		{"RDP named PLD", strings.Replace(rdp, rdpName, pldName, 1)},
	} {
		_, _, err := call(t, "certify", writeFile(t, "swapped.json", c.forged))
		if exitCode(err) != 5 || !strings.Contains(err.Error(), "(the file's ") {
			t.Errorf("%s: exit %d (%v), want 5 naming the file's noise multiplier", c.name, exitCode(err), err)
		}
	}
}
