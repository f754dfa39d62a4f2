package pdp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
)

// WriteDir writes the analysis into dir (created if needed): pdp.csv (a row
// per training row: id, sensitivity, eps, leverage, residual and whether the
// sensitivity is exact), summary.json (the report) and pdp.png (the figure,
// WritePNG). The values are confidential statistics of the data: the files
// are readable by their owner only.
func (r *Result) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, "pdp.csv"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "id,sensitivity,eps,leverage,residual,exact")
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	for i, d := range r.Diffs {
		lev := ""
		if !math.IsNaN(d.Leverage) {
			lev = g(d.Leverage)
		}
		fmt.Fprintf(w, "%d,%s,%s,%s,%s,%t\n", r.IDs[i], g(d.L2), g(r.Epsilons[i]), lev, g(d.Residual), d.Exact)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	rep := r.Report
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), append(js, '\n'), 0o600); err != nil {
		return err
	}
	refs := []Reference{}
	if rep.DPEpsilon != nil {
		refs = append(refs, Reference{Name: "DP eps (replace-one)", Value: *rep.DPEpsilon})
	}
	if rep.WorstCaseEpsilon != nil {
		refs = append(refs, Reference{Name: "worst-case pDP eps (remove-one)", Value: *rep.WorstCaseEpsilon})
	}
	pf, err := os.OpenFile(filepath.Join(dir, "pdp.png"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("per-instance DP: %s loss, lambda %g, %s %s = %.3g", rep.Loss, rep.Lambda, rep.Mechanism, rep.NoiseScaleName, rep.NoiseScale)
	if err := WritePNG(pf, title, r.Epsilons, refs...); err != nil {
		pf.Close()
		return err
	}
	return pf.Close()
}
