package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp"
	"github.com/stabpriv/stabpriv/pdp/internal/linalg"
	"github.com/stabpriv/stabpriv/pdp/internal/pdptest"
	"github.com/stabpriv/stabpriv/perturb"
)

// TestReportAndPlot builds a report on synthetic data, checks its
// invariants (the DP epsilon bounds every per-instance epsilon; the report
// states the convention and the confidentiality), and draws the figure.
func TestReportAndPlot(t *testing.T) {
	const n, d, lambda = 500, 5, 1e-2
	x, y := pdptest.Synth(n, d, losses.Logistic{}, 0, 8)
	a, err := pdp.New(x, y, pdp.Config{Loss: losses.Logistic{}, Lambda: lambda})
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := a.RemoveAll()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.RefineTop(diffs, 10); err != nil {
		t.Fatal(err)
	}
	kappa := 0.0
	for i := 0; i < n; i++ {
		kappa = math.Max(kappa, linalg.Norm2(x.RawRowView(i)))
	}
	replace, remove, err := pdp.WorstCaseSensitivity(1, kappa, lambda, n)
	if err != nil {
		t.Fatal(err)
	}
	m, err := pdp.CalibratedLoss(perturb.AnalyticGaussian, 1, 1e-6, replace, d)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := m.UpperEpsilons(diffs)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, n)
	for i := range ids {
		ids[i] = 1000 + i
	}
	r, err := NewReport(a, m, lambda, ids, diffs, eps, 5)
	if err != nil {
		t.Fatal(err)
	}
	worst, _ := m.EpsilonAt(remove, 0)
	for i, d := range diffs {
		if up, _, _ := d.Upper(); up > remove*(1+1e-9) {
			t.Errorf("row %d: sensitivity bound %g above the worst case %g", i, up, remove)
		}
	}
	if r.Epsilon.Max > worst*(1+1e-9) || worst > 1+1e-9 {
		t.Errorf("max pDP %g, worst-case remove-one %g, DP 1", r.Epsilon.Max, worst)
	}
	if r.Exact != 10 || len(r.Top) != 5 || r.Top[0].ID < 1000 || r.Top[0].Epsilon != r.Epsilon.Max {
		t.Errorf("report %+v", r)
	}
	if !(r.Epsilon.Mean <= r.Epsilon.P99 && r.Epsilon.Median <= r.Epsilon.P90 && r.Moments[0] == r.Epsilon.Mean) {
		t.Errorf("stats %+v moments %v", r.Epsilon, r.Moments)
	}
	js, _ := json.Marshal(r)
	for _, want := range []string{"CONFIDENTIAL", "keeps its regularization weight", "replace_relation", `"kinds"`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	var buf bytes.Buffer
	if err := WritePNG(&buf, "synthetic logistic", eps, Reference{"DP eps", 1}, Reference{"worst-case pDP", worst}); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("\x89PNG")) {
		t.Fatal("not a PNG")
	}
	if dir := os.Getenv("PDP_PLOT_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "pdp.png"), buf.Bytes(), 0o644)
	}
	if err := WritePNG(&buf, "bad", []float64{math.NaN()}); !errors.Is(err, pdp.ErrInput) {
		t.Errorf("NaN drawn: %v", err)
	}
}
