package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/stabpriv/stabpriv/experiments"
)

// paper reads the outputs of make paper under its root, once each.
type paper struct {
	root string
	sums map[string]*experiments.Summary
}

// summary returns the summary.json of dir (relative to the root), or nil.
func (p *paper) summary(dir string) *experiments.Summary {
	if s, ok := p.sums[dir]; ok {
		return s
	}
	var s *experiments.Summary
	if data, err := os.ReadFile(filepath.Join(p.root, dir, "summary.json")); err == nil {
		s = new(experiments.Summary)
		if err := json.Unmarshal(data, s); err != nil {
			fmt.Fprintf(os.Stderr, "docgen: %s/summary.json: %v\n", dir, err)
			s = nil
		}
	}
	p.sums[dir] = s
	return s
}

// missing is the line that stands for a table whose run is absent.
func (p *paper) missing(dir string) string {
	return fmt.Sprintf("*Not run: %s has no summary.json (see the command above).*", filepath.Join(p.root, dir))
}

// toFloat converts a template number (int or float64) to float64.
func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return f
	}
	return math.NaN()
}

// fmtNum prints a value like a grid value: 1e-3, 4.6e-5, 0.1, 2.
func fmtNum(x float64) string {
	if x == 0 || (math.Abs(x) >= 0.01 && math.Abs(x) < 1e4) {
		return strconv.FormatFloat(x, 'g', 3, 64)
	}
	s := strconv.FormatFloat(x, 'e', 1, 64) // 4.6e-05
	mant, exp, _ := strings.Cut(s, "e")
	mant = strings.TrimSuffix(mant, ".0")
	sign := exp[:1]
	exp = strings.TrimLeft(exp[1:], "0")
	if sign == "+" {
		sign = ""
	}
	return mant + "e" + sign + exp
}

func fmtStat(st experiments.Stat) string {
	if math.IsNaN(st.Mean) {
		return "n/a"
	}
	return fmt.Sprintf("%.4f ± %.4f", st.Mean, st.Std)
}

// best returns the best setting of mech at eps.
func best(s *experiments.Summary, mech string, eps float64) (experiments.Best, bool) {
	for _, b := range s.Best {
		if b.Mechanism == mech && b.Epsilon == eps {
			return b, true
		}
	}
	return experiments.Best{}, false
}

// mechLabel names a mechanism's column, with delta for the approximate ones.
func mechLabel(s *experiments.Summary, mech string) string {
	switch mech {
	case "gamma", "laplace", "objective":
		return mech + " (pure)"
	}
	return fmt.Sprintf("%s (delta %s)", mech, fmtNum(s.PrivacyDelta))
}

// table renders a Markdown table.
func table(head []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for range head {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func epsHead(first string, eps []float64, last ...string) []string {
	h := []string{first}
	for _, e := range eps {
		h = append(h, "eps = "+fmtNum(e))
	}
	return append(h, last...)
}

// paperTable gives, for each (dir, label) pair, the best mean test accuracy
// per eps of the summary's first mechanism and the lambda that reaches it,
// and the non-private accuracy.
func (p *paper) paperTable(pairs ...string) string {
	var rows [][]string
	var eps []float64
	for i := 0; i+1 < len(pairs); i += 2 {
		s := p.summary(pairs[i])
		if s == nil {
			return p.missing(pairs[i])
		}
		if eps == nil {
			eps = s.Epsilons
		}
		mech := s.Mechanisms[0]
		acc, lam := []string{pairs[i+1]}, []string{"best lambda"}
		for _, e := range eps {
			b, ok := best(s, mech, e)
			if !ok {
				acc, lam = append(acc, "n/a"), append(lam, "")
				continue
			}
			acc, lam = append(acc, fmtStat(b.Stat)), append(lam, fmtNum(b.Lambda))
		}
		acc = append(acc, fmtStat(s.NonPrivate.Stat))
		lam = append(lam, fmtNum(s.NonPrivate.Lambda))
		rows = append(rows, acc, lam)
	}
	return table(epsHead("run", eps, "non-private"), rows)
}

// mechTable gives the best mean test accuracy of every mechanism of dir per
// eps, and the privately selected release when the sweep selected.
func (p *paper) mechTable(dir string) string {
	s := p.summary(dir)
	if s == nil {
		return p.missing(dir)
	}
	head := []string{"eps"}
	for _, m := range s.Mechanisms {
		head = append(head, mechLabel(s, m))
	}
	if len(s.Selected) > 0 {
		head = append(head, "privately selected (pure)")
	}
	rows := epsRows(s, func(b experiments.Best) string { return fmtStat(b.Stat) })
	if len(s.Selected) > 0 {
		for i, e := range s.Epsilons {
			rows[i] = append(rows[i], selectedCell(s, e))
		}
	}
	return table(head, rows)
}

// epsRows gives a row per eps of s: the eps, then cell of the best setting
// of every mechanism at it ("n/a" for none).
func epsRows(s *experiments.Summary, cell func(experiments.Best) string) [][]string {
	var rows [][]string
	for _, e := range s.Epsilons {
		r := []string{fmtNum(e)}
		for _, m := range s.Mechanisms {
			b, ok := best(s, m, e)
			if !ok {
				r = append(r, "n/a")
				continue
			}
			r = append(r, cell(b))
		}
		rows = append(rows, r)
	}
	return rows
}

func selectedCell(s *experiments.Summary, eps float64) string {
	for _, sp := range s.Selected {
		if sp.Epsilon == eps {
			return fmtStat(sp.Stat)
		}
	}
	return "n/a"
}

// lambdaTable gives the best lambda of every mechanism of dir per eps.
func (p *paper) lambdaTable(dir string) string {
	s := p.summary(dir)
	if s == nil {
		return p.missing(dir)
	}
	head := append([]string{"eps"}, s.Mechanisms...)
	return table(head, epsRows(s, func(b experiments.Best) string { return settingText(b.Setting) }))
}

// settingText is the lambda and the knobs that differ from the baseline.
func settingText(set experiments.Setting) string {
	parts := []string{"lambda " + fmtNum(set.Lambda)}
	if set.Passes == 0 {
		return parts[0]
	}
	if set.Clip > 0 {
		parts = append(parts, "G "+fmtNum(set.Clip))
	}
	if set.L1Ratio != 0.15 {
		parts = append(parts, "l1 "+fmtNum(set.L1Ratio))
	}
	if set.Average {
		parts = append(parts, "avg")
	}
	return strings.Join(parts, ", ")
}

// frontierTable gives the best mean test accuracy per eps and knob family of
// one mechanism.
func (p *paper) frontierTable(dir, mech string) string {
	s := p.summary(dir)
	if s == nil {
		return p.missing(dir)
	}
	head := append([]string{"eps"}, s.Families...)
	var rows [][]string
	for _, e := range s.Epsilons {
		r := []string{fmtNum(e)}
		for _, f := range s.Families {
			cell := "n/a"
			for _, fp := range s.Frontier {
				if fp.Mechanism == mech && fp.Family == f && fp.Epsilon == e {
					cell = fmt.Sprintf("%.4f", fp.Mean)
				}
			}
			r = append(r, cell)
		}
		rows = append(rows, r)
	}
	return table(head, rows)
}

// selectedTable gives, for each (dir, label) pair, the privately selected
// releases' accuracy per eps, and, per run, the mechanism for eps below
// objective's line.
func (p *paper) selectedTable(pairs ...string) string {
	var eps []float64
	for i := 0; i+1 < len(pairs); i += 2 {
		if s := p.summary(pairs[i]); s != nil {
			for _, e := range s.Epsilons {
				if !slices.Contains(eps, e) {
					eps = append(eps, e)
				}
			}
		}
	}
	slices.Sort(eps)
	var rows [][]string
	for i := 0; i+1 < len(pairs); i += 2 {
		s := p.summary(pairs[i])
		if s == nil {
			return p.missing(pairs[i])
		}
		r := []string{pairs[i+1]}
		for _, e := range eps {
			if !slices.Contains(s.Epsilons, e) {
				r = append(r, "not run")
				continue
			}
			r = append(r, selectedCell(s, e))
		}
		rows = append(rows, r)
	}
	return table(epsHead("selection", eps), rows)
}

// fixedTable gives the Figure 2 releases: the eps the fixed noise scale buys
// at each lambda, and the accuracy.
func (p *paper) fixedTable(dir string) string {
	s := p.summary(dir)
	if s == nil {
		return p.missing(dir)
	}
	if len(s.FixedPoints) == 0 {
		return "*No fixed-scale releases in this run.*"
	}
	var rows [][]string
	for _, fp := range s.FixedPoints {
		rows = append(rows, []string{fmtNum(fp.Lambda), fmtNum(fp.Epsilon), fmtStat(fp.Acc)})
	}
	return fmt.Sprintf("Noise scale %s.\n\n", fmtNum(s.FixedScale)) +
		table([]string{"lambda", "eps at this scale", "test accuracy"}, rows)
}

// readCSV reads a CSV file into maps keyed by the header.
func readCSV(path string) ([]map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for j, h := range recs[0] {
			if j < len(r) {
				m[h] = r[j]
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// meanBy averages the value column of the rows that keep accepts, by key.
func meanBy(rows []map[string]string, key func(map[string]string) [2]float64, keep func(map[string]string) bool, value string) map[[2]float64][]float64 {
	by := map[[2]float64][]float64{}
	for _, r := range rows {
		if keep(r) {
			v, err := strconv.ParseFloat(r[value], 64)
			if err == nil {
				by[key(r)] = append(by[key(r)], v)
			}
		}
	}
	return by
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func num(r map[string]string, k string) float64 {
	f, _ := strconv.ParseFloat(r[k], 64)
	return f
}

// featselTable gives the mean F1 of the dynamic-threshold selection against
// the non-private one, per lambda and eps (featsel.csv).
func (p *paper) featselTable(dir string) string {
	path := filepath.Join(p.root, dir, "featsel.csv")
	rows, err := readCSV(path)
	if err != nil || len(rows) == 0 {
		return fmt.Sprintf("*Not run: %s is missing.*", path)
	}
	by := meanBy(rows, func(r map[string]string) [2]float64 { return [2]float64{num(r, "lambda"), num(r, "epsilon")} },
		func(r map[string]string) bool { return r["rule"] == experiments.RuleDynamic }, "f1")
	var lams, eps []float64
	for k := range by {
		if !slices.Contains(lams, k[0]) {
			lams = append(lams, k[0])
		}
		if !slices.Contains(eps, k[1]) {
			eps = append(eps, k[1])
		}
	}
	slices.Sort(lams)
	slices.Sort(eps)
	var out [][]string
	for _, l := range lams {
		r := []string{fmtNum(l)}
		for _, e := range eps {
			r = append(r, fmt.Sprintf("%.2f", mean(by[[2]float64{l, e}])))
		}
		out = append(out, r)
	}
	return table(epsHead("lambda", eps), out)
}

// diffprivlibTable gives the best mean test accuracy per eps of diffprivlib's
// LogisticRegression over its lambda grid (bench/diffprivlib_side.py
// accuracy --out), with its lambda.
func (p *paper) diffprivlibTable(file string) string {
	path := filepath.Join(p.root, file)
	rows, err := readCSV(path)
	if err != nil || len(rows) == 0 {
		return ""
	}
	by := meanBy(rows, func(r map[string]string) [2]float64 { return [2]float64{num(r, "epsilon"), num(r, "lam")} },
		func(map[string]string) bool { return true }, "acc")
	var eps []float64
	for k := range by {
		if !slices.Contains(eps, k[0]) {
			eps = append(eps, k[0])
		}
	}
	slices.Sort(eps)
	var out [][]string
	for _, e := range eps {
		bestL, bestM, bestS := 0.0, math.Inf(-1), 0.0
		for k, v := range by {
			if k[0] == e && mean(v) > bestM {
				bestL, bestM = k[1], mean(v)
				ss := 0.0
				for _, x := range v {
					ss += (x - bestM) * (x - bestM)
				}
				bestS = math.Sqrt(ss / float64(max(len(v)-1, 1)))
			}
		}
		out = append(out, []string{fmtNum(e), fmt.Sprintf("%.4f ± %.4f", bestM, bestS), fmtNum(bestL)})
	}
	return table([]string{"eps", "diffprivlib LogisticRegression", "best lambda"}, out)
}

// resultsFuncs are the template functions of results.md.tmpl.
func (p *paper) funcs() template.FuncMap {
	return template.FuncMap{
		"paperTable":       p.paperTable,
		"mechTable":        p.mechTable,
		"lambdaTable":      p.lambdaTable,
		"frontierTable":    p.frontierTable,
		"selectedTable":    p.selectedTable,
		"fixedTable":       p.fixedTable,
		"featselTable":     p.featselTable,
		"diffprivlibTable": p.diffprivlibTable,
		// include returns a Markdown file that a driver of make paper
		// wrote under the root (bench/defaults: defaults/table.md).
		"include": func(file string) string {
			b, err := os.ReadFile(filepath.Join(p.root, file))
			if err != nil {
				return fmt.Sprintf("*Not run: %s is missing (see the command above).*", filepath.Join(p.root, file))
			}
			return strings.TrimSpace(string(b))
		},
		"has": func(dir string) bool { return p.summary(dir) != nil },
		// accF and selectedF are acc and selected as numbers (NaN when
		// absent), for comparisons in the template.
		"accF": func(dir, mech string, eps any) float64 {
			if s := p.summary(dir); s != nil {
				if b, ok := best(s, mech, toFloat(eps)); ok {
					return b.Mean
				}
			}
			return math.NaN()
		},
		"selectedF": func(dir string, eps any) float64 {
			if s := p.summary(dir); s != nil {
				for _, sp := range s.Selected {
					if sp.Epsilon == toFloat(eps) {
						return sp.Mean
					}
				}
			}
			return math.NaN()
		},
		"sub":  func(a, b float64) float64 { return a - b },
		"list": func(xs ...any) []any { return xs },
		"num":  func(s string) float64 { return toFloat(s) },
		// first and second split "a:b".
		"first":  func(s string) string { a, _, _ := strings.Cut(s, ":"); return a },
		"second": func(s string) string { _, b, _ := strings.Cut(s, ":"); return b },
		"f4":     func(x float64) string { return fmt.Sprintf("%.4f", x) },
		// acc gives the best mean test accuracy of mech at eps in dir.
		"acc": func(dir, mech string, eps any) string {
			s := p.summary(dir)
			if s == nil {
				return "n/a"
			}
			b, ok := best(s, mech, toFloat(eps))
			if !ok {
				return "n/a"
			}
			return fmt.Sprintf("%.4f", b.Mean)
		},
		// lambda gives the lambda of that best setting.
		"lambda": func(dir, mech string, eps any) string {
			s := p.summary(dir)
			if s == nil {
				return "n/a"
			}
			b, ok := best(s, mech, toFloat(eps))
			if !ok {
				return "n/a"
			}
			return fmtNum(b.Lambda)
		},
		// nonPrivate gives the best mean non-private test accuracy of dir.
		"nonPrivate": func(dir string) string {
			s := p.summary(dir)
			if s == nil {
				return "n/a"
			}
			return fmt.Sprintf("%.4f", s.NonPrivate.Mean)
		},
		// selected gives the privately selected releases' mean accuracy at eps.
		"selected": func(dir string, eps any) string {
			s := p.summary(dir)
			if s == nil {
				return "n/a"
			}
			for _, sp := range s.Selected {
				if sp.Epsilon == toFloat(eps) {
					return fmt.Sprintf("%.4f", sp.Mean)
				}
			}
			return "n/a"
		},
		// chosen lists what the private selection chose at eps, with counts.
		"chosen": func(dir string, eps any) string {
			s := p.summary(dir)
			if s == nil {
				return "n/a"
			}
			for _, sp := range s.Selected {
				if sp.Epsilon == toFloat(eps) {
					var parts []string
					for k, v := range sp.Chosen {
						parts = append(parts, fmt.Sprintf("%s %d", k, v))
					}
					slices.Sort(parts)
					return strings.Join(parts, ", ")
				}
			}
			return "n/a"
		},
	}
}

func results(args []string) error {
	fs := fileFlag("results")
	root := fs.String("paper", "out/paper", "the output directory of make paper")
	out := fs.String("o", "docs/RESULTS.md", "the file to write (- for standard output)")
	command := fs.String("command", "make paper", "the command named at the top of the document")
	keep := fs.Bool("keep", false, "keep, from the file at -o as it was, every section whose outputs are absent from -paper, under a note naming the commit of its figures")
	fs.Parse(args)
	p := &paper{root: *root, sums: map[string]*experiments.Summary{}}
	m := newMachine(*command)
	m.Peers = peers(readEnv(filepath.Join(*root, "env.jsonl")))
	var old []byte
	if *keep {
		if *out == "" || *out == "-" {
			return fmt.Errorf("-keep needs -o FILE: the earlier document")
		}
		var err error
		if old, err = os.ReadFile(*out); err != nil {
			return fmt.Errorf("-keep: %w", err)
		}
	}
	if err := render("results.md.tmpl", resultsTemplate, p.funcs(), struct{ Header string }{m.Header("results.md.tmpl")}, *out); err != nil {
		return err
	}
	if *keep {
		return keepFrom(*out, string(old))
	}
	return nil
}
