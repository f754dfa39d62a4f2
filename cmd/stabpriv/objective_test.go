package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
)

// TestCLIObjective trains with --mechanism objective and amp, certifies
// the files (exit 0), predicts with them, refuses tampered files (exit 5)
// and the knobs that do not apply (exit 2).
func TestCLIObjective(t *testing.T) {
	dir := t.TempDir()
	data := writeFile(t, "wdbc.csv", string(datasets.DefaultCSV()))
	for _, args := range [][]string{
		{"--mechanism", "objective"},
		{"--mechanism", "amp", "--delta", "1e-5"},
	} {
		path := filepath.Join(dir, args[1]+".json")
		if _, _, err := call(t, append([]string{"train", "--out", path}, args...)...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		stdout, _, err := call(t, "certify", path)
		if code := exitCode(err); code != 0 || !strings.HasPrefix(stdout, "VERIFIED PRIVATE RELEASE") {
			t.Errorf("%s: certify exit %d (%v)", args[1], code, err)
		}
		if _, _, err := call(t, "predict", "--model", path, "--data", data); err != nil {
			t.Errorf("%s: predict: %v", args[1], err)
		}
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct{ from, to string }{
			{`"epsilon": 1,`, `"epsilon": 3,`},
			{`"lambda": `, `"lambda": 1e-3, "x": `},
			{`"smoothness": 0.25`, `"smoothness": 0.125`},
		} {
			bad := strings.Replace(string(orig), tt.from, tt.to, 1)
			if bad == string(orig) {
				t.Fatalf("pattern %q not in the file", tt.from)
			}
			_, _, err := call(t, "certify", writeFile(t, "bad.json", bad))
			if code := exitCode(err); code != 5 {
				t.Errorf("%s tampered %q: exit %d (%v), want 5", args[1], tt.to, code, err)
			}
		}
	}
	for _, args := range [][]string{
		{"--mechanism", "objective", "--clip", "0.1", "--lambda", "0.05"},
		{"--mechanism", "objective", "--passes", "3"},
		{"--mechanism", "objective", "--lambda", "1e-5"},
		{"--mechanism", "amp"},
		{"--mechanism", "objective", "--loss", "huber-hinge", "--lambda", "0.05"},
	} {
		_, _, err := call(t, append([]string{"train"}, args...)...)
		if code := exitCode(err); code != 2 {
			t.Errorf("%v: exit %d (%v), want 2", args, code, err)
		}
	}
}
