package pdp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/stabpriv/stabpriv/internal/safefile"
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
	rep := r.Report
	refs := []Reference{}
	if rep.DPEpsilon != nil {
		refs = append(refs, Reference{Name: "DP eps (replace-one)", Value: *rep.DPEpsilon})
	}
	if rep.WorstCaseEpsilon != nil {
		refs = append(refs, Reference{Name: "worst-case pDP eps (remove-one)", Value: *rep.WorstCaseEpsilon})
	}
	title := figureTitle(rep)
	return safefile.WriteAll([]safefile.File{
		{Path: filepath.Join(dir, "pdp.csv"), Perm: 0o600, Write: r.writeCSV},
		{Path: filepath.Join(dir, "summary.json"), Perm: 0o600, Write: func(w io.Writer) error {
			js, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				return err
			}
			_, err = w.Write(append(js, '\n'))
			return err
		}},
		{Path: filepath.Join(dir, "pdp.png"), Perm: 0o600, Write: func(w io.Writer) error { return WritePNG(w, title, r.Epsilons, refs...) }},
	})
}

// writeCSV writes a row per training row.
func (r *Result) writeCSV(out io.Writer) error {
	w := bufio.NewWriter(out)
	fmt.Fprintln(w, "id,sensitivity,eps,leverage,residual,exact")
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	for i, d := range r.Diffs {
		lev := ""
		if !math.IsNaN(d.Leverage) {
			lev = g(d.Leverage)
		}
		fmt.Fprintf(w, "%d,%s,%s,%s,%s,%t\n", r.IDs[i], g(d.L2), g(r.Epsilons[i]), lev, g(d.Residual), d.Exact)
	}
	return w.Flush()
}
