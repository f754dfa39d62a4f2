package modelfile_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
)

// TestVerifyDPSGD checks that a DP-SGD release of the embedded table at
// the automatic knobs verifies (its eps rebuilt by the accountant from the
// file), and that Verify refuses the file with an edited noise multiplier,
// step count, sample rate, number of passes, expected batch or clipping
// norm, naming the field.
func TestVerifyDPSGD(t *testing.T) {
	tab, schema, err := datasets.DefaultTable()
	if err != nil {
		t.Fatal(err)
	}
	r, err := private.Fit(context.Background(), tab, schema, dp.Budget{Epsilon: 1, Delta: 1e-6}, private.Options{Mechanism: perturb.DPSGD, Auto: true, TestFrac: 0.2, Seed: 1, Noise: perturb.Seeded(5)})
	if err != nil {
		t.Fatal(err)
	}
	if v, why, err := modelfile.Verify(r); err != nil || v != modelfile.NotPrivate {
		t.Fatalf("a seeded dp-sgd release: %v %q %v", v, why, err)
	}
	data := encodeModel(t, r)
	for _, tc := range []struct {
		name, field string
		edit        func(run map[string]any)
	}{
		{"noise multiplier", "dp_sgd", func(run map[string]any) {
			d := run["dp_sgd"].(map[string]any)
			d["noise_multiplier"] = d["noise_multiplier"].(float64) * 0.9
		}},
		{"steps", "dp_sgd", func(run map[string]any) {
			d := run["dp_sgd"].(map[string]any)
			d["steps"] = d["steps"].(float64) / 2
		}},
		{"sample rate", "dp_sgd", func(run map[string]any) {
			d := run["dp_sgd"].(map[string]any)
			d["sample_rate"] = d["sample_rate"].(float64) / 2
		}},
		{"passes", "passes", func(run map[string]any) { run["passes"] = run["passes"].(float64) - 1 }},
		{"batch", "b = 21", func(run map[string]any) { run["batch"] = run["batch"].(float64) + 1 }},
		{"clip", "C = 0.5", func(run map[string]any) { run["clip"] = 0.5 }},
	} {
		edited := tamper(t, data, func(doc map[string]any) { tc.edit(cert(doc)["run"].(map[string]any)) })
		f, err := modelfile.Read(bytes.NewReader(edited))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if _, _, err := modelfile.Verify(f); !errors.Is(err, modelfile.ErrVerify) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("edited %s: %v, want ErrVerify naming %s", tc.name, err, tc.field)
		}
	}
}
