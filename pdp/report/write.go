package report

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/internal/safefile"
	"github.com/stabpriv/stabpriv/pdp"
)

// WriteDir writes the analysis into dir (created if needed): pdp.csv (a row
// per training row, writeCSV), targets.csv (a row per held-out row analysed
// as a target, header only when there are none), summary.json (the report)
// and pdp.png (the figure, WriteFigure: the rows' remove-one and
// replace-one epsilons and the targets', against the DP epsilon, the
// worst case for every target and the data-dependent pDP for all). The
// values are confidential statistics of the data: the files are readable
// by their owner only. An existing file there is replaced only with
// replace; without it, of concurrent writers into one directory exactly
// one writes its files, and a file that appeared since the caller checked
// fails the write with nothing written (safefile.New).
func (r *Result) WriteDir(dir string, replace bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	rep := r.Report
	refs := []Reference{}
	if rep.DPEpsilon != nil {
		name := "DP eps (replace-one)"
		if strings.HasPrefix(rep.DPNeighbours, "add/remove") {
			name = "DP eps (add/remove-one)"
		}
		refs = append(refs, Reference{Name: name, Value: *rep.DPEpsilon})
	}
	if rep.WorstCaseEpsilon != nil {
		refs = append(refs, Reference{Name: "pDP for all, any data set", Value: *rep.WorstCaseEpsilon})
	}
	if rep.PDPForAllEpsilon != nil {
		refs = append(refs, Reference{Name: "pDP for all, this data set", Value: *rep.PDPForAllEpsilon})
	}
	series := []Series{{Name: "training rows, remove-one", Short: "remove-one", Values: r.Epsilons}}
	if r.TargetEpsilons != nil {
		series = append(series, Series{Name: "held-out targets, add-one", Short: "targets", Values: r.TargetEpsilons})
	}
	if r.ReplaceEpsilons != nil {
		series = append(series, Series{Name: "training rows, replace-one bound", Short: "replace-one", Values: r.ReplaceEpsilons, BoxOnly: true})
	}
	title := figureTitle(rep)
	mode := safefile.New
	if replace {
		mode = safefile.Replace
	}
	return safefile.WriteAll([]safefile.File{
		{Path: filepath.Join(dir, "pdp.csv"), Perm: 0o600, Mode: mode, Write: r.writeCSV},
		{Path: filepath.Join(dir, "targets.csv"), Perm: 0o600, Mode: mode, Write: r.writeTargets},
		{Path: filepath.Join(dir, "summary.json"), Perm: 0o600, Mode: mode, Write: func(w io.Writer) error {
			js, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				return err
			}
			_, err = w.Write(append(js, '\n'))
			return err
		}},
		{Path: filepath.Join(dir, "pdp.png"), Perm: 0o600, Mode: mode, Write: func(w io.Writer) error { return WriteFigure(w, title, series, refs...) }},
	})
}

// CSVColumns are the columns of pdp.csv, one row per training row:
//
//	id                         the row's data row number (from 1)
//	sensitivity, eps           remove-one, at the row's upper bound (kind)
//	kind                       exact, upper-bound or estimate (pdp.Diff.Kind)
//	sensitivity_one_step       the one-step value (the exact one if refined)
//	sensitivity_replace,       replace-one, upper bounds over every
//	eps_replace                replacement in the domain (pdp.ReplaceBound;
//	                           empty without one, estimates where kind is)
//	sensitivity_flip_estimate  the one-step move of the label-flipped copy
//	leverage, residual         of the row at w_hat (Diff)
//	exact                      whether the row was refined
var CSVColumns = []string{"id", "sensitivity", "eps", "kind", "sensitivity_one_step", "sensitivity_replace", "eps_replace", "sensitivity_flip_estimate", "leverage", "residual", "exact"}

// TargetColumns are the columns of targets.csv, one row per held-out row
// added as a target: its id, the add-one sensitivity and epsilon at its
// upper bound, their kind and the one-step value.
var TargetColumns = []string{"id", "sensitivity", "eps", "kind", "sensitivity_one_step", "leverage", "residual"}

// field appends a comma and v formatted for the CSV files (10
// significant digits, strconv's 'g').
func field(b []byte, v float64) []byte {
	return strconv.AppendFloat(append(b, ','), v, 'g', 10, 64)
}

// text appends a comma and s.
func text(b []byte, s string) []byte { return append(append(b, ','), s...) }

// leverage appends a comma and a difference's leverage, nothing after the
// comma when it has none (K > 1).
func leverage(b []byte, d pdp.Diff) []byte {
	if math.IsNaN(d.Leverage) {
		return append(b, ',')
	}
	return field(b, d.Leverage)
}

// writeCSV writes a row per training row (CSVColumns), each appended into
// one reused buffer.
func (r *Result) writeCSV(out io.Writer) error {
	w := bufio.NewWriter(out)
	w.WriteString(strings.Join(CSVColumns, ",") + "\n")
	var b []byte
	for i, d := range r.Diffs {
		up, _, _ := d.Upper()
		b = strconv.AppendInt(b[:0], int64(r.IDs[i]), 10)
		b = text(field(field(b, up), r.Epsilons[i]), d.Kind())
		b = field(b, d.L2)
		if r.Replace != nil {
			b = field(field(b, r.Replace[i]), r.ReplaceEpsilons[i])
		} else {
			b = append(b, ",,"...)
		}
		if r.FlipSensitivities != nil {
			b = field(b, r.FlipSensitivities[i])
		} else {
			b = append(b, ',')
		}
		b = field(leverage(b, d), d.Residual)
		b = append(strconv.AppendBool(append(b, ','), d.Exact), '\n')
		w.Write(b)
	}
	return w.Flush()
}

// writeTargets writes a row per held-out target (TargetColumns).
func (r *Result) writeTargets(out io.Writer) error {
	w := bufio.NewWriter(out)
	w.WriteString(strings.Join(TargetColumns, ",") + "\n")
	var b []byte
	for i, d := range r.TargetDiffs {
		up, _, _ := d.Upper()
		b = strconv.AppendInt(b[:0], int64(r.TargetIDs[i]), 10)
		b = text(field(field(b, up), r.TargetEpsilons[i]), d.Kind())
		b = field(leverage(field(b, d.L2), d), d.Residual)
		w.Write(append(b, '\n'))
	}
	return w.Flush()
}
