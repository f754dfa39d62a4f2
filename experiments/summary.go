package experiments

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/experiments/internal/chart"
)

// Stat is a mean and a sample standard deviation over N splits (Std is 0
// for N = 1).
type Stat struct {
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
	N    int     `json:"n"`
}

// point returns the mean and std of the Stat for a chart.
func (s Stat) point() chart.Point { return chart.Point{Mean: s.Mean, Std: s.Std} }

// newStat returns the Stat of xs.
func newStat(xs []float64) Stat {
	s := Stat{N: len(xs)}
	if s.N == 0 {
		return Stat{Mean: math.NaN(), Std: math.NaN()}
	}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(s.N)
	if s.N > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.Std = math.Sqrt(ss / float64(s.N-1))
	}
	return s
}

// Best is the setting with the best mean test accuracy at one eps.
type Best struct {
	// Mechanism is empty for the non-private row.
	Mechanism string `json:"mechanism,omitempty"`
	// Epsilon is 0 for the non-private row.
	Epsilon float64 `json:"epsilon,omitempty"`
	Lambda  float64 `json:"lambda"`
	// Setting is the winning setting (lambda and every knob).
	Setting Setting `json:"setting"`
	Stat
}

// FrontierPoint is the best mean test accuracy at one eps among the
// settings of one knob family, for one mechanism, and the setting that
// wins.
type FrontierPoint struct {
	Mechanism string  `json:"mechanism"`
	Family    string  `json:"family"`
	Epsilon   float64 `json:"epsilon"`
	Setting   Setting `json:"setting"`
	Stat
}

// SelectedPoint is the mean test accuracy of the privately selected
// releases at one eps (one per split), and how often each mechanism and
// knob family was chosen.
type SelectedPoint struct {
	Epsilon    float64        `json:"epsilon"`
	EpsSelect  float64        `json:"eps_select"`
	EpsRelease float64        `json:"eps_release"`
	Chosen     map[string]int `json:"chosen"`
	Stat
}

// FixedPoint is one lambda of the fixed-scale (Figure 2) releases: the eps
// the fixed noise buys and the accuracy.
type FixedPoint struct {
	Lambda  float64 `json:"lambda"`
	Epsilon float64 `json:"epsilon"`
	Acc     Stat    `json:"acc"`
}

// Summary condenses the rows of a sweep.
type Summary struct {
	Dataset string `json:"dataset"`
	// DataFile is the rows' Result.DataFile.
	DataFile     string    `json:"data_file,omitempty"`
	Mechanism    string    `json:"mechanism"`
	PrivacyDelta float64   `json:"privacy_delta"`
	Splits       int       `json:"splits"`
	Lambdas      []float64 `json:"lambdas"`
	Epsilons     []float64 `json:"epsilons"`
	Rows         int       `json:"rows"`
	// Mechanisms lists the mechanisms of the calibrated rows, in order.
	Mechanisms []string `json:"mechanisms"`
	// Families lists the knob families of the frontier (Knobs.Families).
	Families []string `json:"families"`
	// Best holds, per mechanism and eps, the setting of the best mean
	// private test accuracy over the splits, with its mean and std: chosen
	// on the test accuracy, optimistic and not private.
	Best []Best `json:"best"`
	// Frontier holds the best per mechanism, family and eps.
	Frontier []FrontierPoint `json:"frontier"`
	// Selected holds the privately selected releases per eps (empty
	// without a selection).
	Selected []SelectedPoint `json:"selected,omitempty"`
	// NonPrivate is the best mean test accuracy of the noise-free models.
	NonPrivate Best `json:"nonprivate"`
	// Majority is the accuracy of always predicting the majority class of
	// the test rows, over the splits (one value per split, Result.Majority);
	// N is 0 when the rows do not record it.
	Majority Stat `json:"majority"`
	// FixedScale and FixedPoints describe the Figure 2 releases (empty
	// when they were skipped).
	FixedScale  float64      `json:"fixed_scale,omitempty"`
	FixedPoints []FixedPoint `json:"fixed_points,omitempty"`
	// Seconds is the wall time of the sweep and Command the command that
	// ran it, when the caller sets them.
	Seconds float64  `json:"seconds,omitempty"`
	Command string   `json:"command,omitempty"`
	Notes   []string `json:"notes"`
}

// curve is the mean and std of a value per lambda.
type curve struct {
	lambdas []float64
	stats   []Stat
}

// lambdaOf gives the lambda of a row.
type lambdaOf[T any] func(T) float64

// collectBy groups the values of the rows that keep accepts by lambda, in
// increasing lambda order.
func collectBy[T any](rows []T, lambda lambdaOf[T], keep func(T) bool, value func(T) float64) curve {
	by := map[float64][]float64{}
	for _, r := range rows {
		if keep(r) {
			by[lambda(r)] = append(by[lambda(r)], value(r))
		}
	}
	var c curve
	for l := range by {
		c.lambdas = append(c.lambdas, l)
	}
	slices.Sort(c.lambdas)
	for _, l := range c.lambdas {
		c.stats = append(c.stats, newStat(by[l]))
	}
	return c
}

// collect is collectBy for sweep rows.
func collect(rows []Result, keep func(Result) bool, value func(Result) float64) curve {
	return collectBy(rows, func(r Result) float64 { return r.Lambda }, keep, value)
}

// epsilonCurve returns the private accuracy per lambda at eps of the
// mechanism's releases of the lambda family (every knob at its baseline).
func epsilonCurve(rows []Result, mech string, eps float64) curve {
	return collect(rows, func(r Result) bool {
		return r.Mode == Calibrated && r.Epsilon == eps && r.Mechanism == mech && r.Setting.InFamily(FamilyLambda)
	}, func(r Result) float64 { return r.AccPrivate })
}

// nonPrivateCurve returns the noise-free accuracy per lambda of the lambda
// family of mechanism mech's calibrated rows (one value per split and
// lambda): the noise-free counterpart of its releases (the SGD weights for
// an output-perturbation mechanism, the exact minimizer at the lambda run
// for a training-time one).
func nonPrivateCurve(rows []Result, mech string) curve {
	first := map[[2]float64]bool{}
	return collect(rows, func(r Result) bool {
		k := [2]float64{float64(r.Split), r.Lambda}
		if r.Mode != Calibrated || r.Mechanism != mech || first[k] || !r.Setting.InFamily(FamilyLambda) {
			return false
		}
		first[k] = true
		return true
	}, func(r Result) float64 { return r.AccNonPrivate })
}

// bestSetting returns the setting with the best mean value among the rows
// that keep accepts, grouped by setting (ties: the first in row order).
func bestSetting(rows []Result, keep func(Result) bool, value func(Result) float64) (Setting, Stat) {
	by := map[Setting][]float64{}
	var order []Setting
	for _, r := range rows {
		if !keep(r) {
			continue
		}
		set := settingOf(r)
		if _, ok := by[set]; !ok {
			order = append(order, set)
		}
		by[set] = append(by[set], value(r))
	}
	best, bs := Setting{}, Stat{Mean: math.NaN(), Std: math.NaN()}
	for i, set := range order {
		if st := newStat(by[set]); i == 0 || st.Mean > bs.Mean {
			best, bs = set, st
		}
	}
	return best, bs
}

// settingOf returns the setting of a row, with its Lambda (rows built by
// hand may set Lambda only).
func settingOf(r Result) Setting {
	s := r.Setting
	s.Lambda = r.Lambda
	return s
}

// families returns the knob families present in the rows.
func families(rows []Result) []string {
	seen := map[string]bool{}
	for _, r := range rows {
		if r.Setting.Varied != "" && !strings.Contains(r.Setting.Varied, "+") {
			seen[r.Setting.Varied] = true
		}
	}
	out := []string{FamilyLambda}
	for _, k := range knobNames {
		if seen[k] {
			out = append(out, k)
		}
	}
	if len(out) > 2 {
		out = append(out, FamilyAll)
	}
	return out
}

// Summarize condenses the rows of a sweep; notes are copied into it.
func Summarize(rows []Result, notes ...string) Summary {
	s := Summary{Rows: len(rows), Notes: slices.Clone(notes)}
	splits := map[int]bool{}
	for _, r := range rows {
		splits[r.Split] = true
		if s.Dataset == "" {
			s.Dataset, s.DataFile, s.Mechanism, s.PrivacyDelta = r.Dataset, r.DataFile, r.Mechanism, r.PrivacyDelta
		}
		if !slices.Contains(s.Lambdas, r.Lambda) {
			s.Lambdas = append(s.Lambdas, r.Lambda)
		}
		if r.Mode == Calibrated && !slices.Contains(s.Epsilons, r.Epsilon) {
			s.Epsilons = append(s.Epsilons, r.Epsilon)
		}
		if r.Mode == Calibrated && !slices.Contains(s.Mechanisms, r.Mechanism) {
			s.Mechanisms = append(s.Mechanisms, r.Mechanism)
		}
		if r.Mode == Calibrated && r.PrivacyDelta > 0 {
			s.PrivacyDelta = r.PrivacyDelta
		}
		if r.Mode == FixedScale {
			s.FixedScale = r.NoiseScale
		}
	}
	s.Splits = len(splits)
	slices.Sort(s.Lambdas)
	slices.Sort(s.Epsilons)
	s.Families = families(rows)
	acc := func(r Result) float64 { return r.AccPrivate }
	for _, mech := range s.Mechanisms {
		for _, eps := range s.Epsilons {
			at := func(r Result) bool { return r.Mode == Calibrated && r.Mechanism == mech && r.Epsilon == eps }
			set, st := bestSetting(rows, at, acc)
			if st.N == 0 {
				continue
			}
			s.Best = append(s.Best, Best{Mechanism: mech, Epsilon: eps, Lambda: set.Lambda, Setting: set, Stat: st})
			for _, fam := range s.Families {
				set, st := bestSetting(rows, func(r Result) bool { return at(r) && r.Setting.InFamily(fam) }, acc)
				s.Frontier = append(s.Frontier, FrontierPoint{Mechanism: mech, Family: fam, Epsilon: eps, Setting: set, Stat: st})
			}
		}
	}
	for _, eps := range s.Epsilons {
		var accs []float64
		p := SelectedPoint{Epsilon: eps, Chosen: map[string]int{}}
		for _, r := range rows {
			if r.Mode == Selected && r.Epsilon == eps {
				accs = append(accs, r.AccPrivate)
				p.EpsSelect, p.EpsRelease = r.EpsSelect, r.EpsRelease
				fam := r.Setting.Varied
				if fam == "" {
					fam = FamilyLambda
				}
				p.Chosen[r.Mechanism+" "+fam]++
			}
		}
		if len(accs) > 0 {
			p.Stat = newStat(accs)
			s.Selected = append(s.Selected, p)
		}
	}
	// One noise-free accuracy per split and setting.
	seen := map[struct {
		split int
		set   Setting
	}]bool{}
	set, st := bestSetting(rows, func(r Result) bool {
		k := struct {
			split int
			set   Setting
		}{r.Split, settingOf(r)}
		if r.Mode != Calibrated || seen[k] {
			return false
		}
		seen[k] = true
		return true
	}, func(r Result) float64 { return r.AccNonPrivate })
	s.NonPrivate = Best{Lambda: set.Lambda, Setting: set, Stat: st}
	s.Majority = majorityStat(rows)
	fixed := func(r Result) bool { return r.Mode == FixedScale }
	fixedAcc := collect(rows, fixed, func(r Result) float64 { return r.AccPrivate })
	eps := collect(rows, fixed, func(r Result) float64 { return r.Epsilon })
	for i, l := range fixedAcc.lambdas {
		s.FixedPoints = append(s.FixedPoints, FixedPoint{Lambda: l, Epsilon: eps.stats[i].Mean, Acc: fixedAcc.stats[i]})
	}
	return s
}

// majorityStat returns the Stat of the majority shares of the splits: the
// first recorded Result.Majority of each split (every row of a split has
// the same test rows), or the zero Stat when no row records one.
func majorityStat(rows []Result) Stat {
	seen := map[int]bool{}
	var shares []float64
	for _, r := range rows {
		if r.Majority > 0 && !seen[r.Split] {
			seen[r.Split] = true
			shares = append(shares, r.Majority)
		}
	}
	if len(shares) == 0 {
		return Stat{}
	}
	return newStat(shares)
}

// WriteTable writes the best mean test accuracy per eps (best setting)
// with its std over the splits for every mechanism side by side, the
// privately selected column, the non-private row, the majority-class row
// (the accuracy of always predicting the test rows' majority class, when the
// rows record it), the winning settings, the
// frontier by knob family, and the fixed-scale points.
func (s Summary) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "%s, %d splits: best mean test accuracy per eps (best setting, chosen on the test accuracy: optimistic, as in the paper's tables), std over the splits\n", dataName(s.Dataset, s.DataFile), s.Splits)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "eps\t")
	for _, m := range s.Mechanisms {
		fmt.Fprintf(tw, "%s\t", s.mechLabel(m))
	}
	if len(s.Selected) > 0 {
		fmt.Fprint(tw, "privately selected\t")
	}
	fmt.Fprint(tw, "\n")
	for _, eps := range s.Epsilons {
		fmt.Fprintf(tw, "%g\t", eps)
		for _, m := range s.Mechanisms {
			fmt.Fprintf(tw, "%s\t", cell(s.best(m, eps)))
		}
		if len(s.Selected) > 0 {
			fmt.Fprintf(tw, "%s\t", cell(s.selected(eps)))
		}
		fmt.Fprint(tw, "\n")
	}
	fmt.Fprintf(tw, "non-private\t%s\t\n", cell(s.NonPrivate.Stat))
	if s.Majority.N > 0 {
		fmt.Fprintf(tw, "majority class\t%s\t\n", cell(s.Majority))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nwinning settings (test-selected):\n")
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, b := range s.Best {
		fmt.Fprintf(tw, "  %s\teps %g\t%.4f\t%s\n", b.Mechanism, b.Epsilon, b.Mean, b.Setting)
	}
	fmt.Fprintf(tw, "  non-private\t\t%.4f\t%s\n", s.NonPrivate.Mean, s.NonPrivate.Setting)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.Selected) > 0 {
		fmt.Fprintf(w, "\nprivately selected (selection.Select: setting and mechanism chosen inside the budget, eps = eps_select + eps_release, validation split of the training rows):\n")
		for _, p := range s.Selected {
			fmt.Fprintf(w, "  eps %g = %.4g + %.4g: %s; chosen %s\n", p.Epsilon, p.EpsSelect, p.EpsRelease, cell(p.Stat), chosenList(p.Chosen))
		}
	}
	if len(s.Families) > 1 {
		for _, m := range s.Mechanisms {
			fmt.Fprintf(w, "\nfrontier, %s: best mean test accuracy per eps by knob family (lambda tuned in each)\n", s.mechLabel(m))
			tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintf(tw, "eps\t%s\t\n", strings.Join(s.Families, "\t"))
			for _, eps := range s.Epsilons {
				fmt.Fprintf(tw, "%g\t", eps)
				for _, fam := range s.Families {
					fmt.Fprintf(tw, "%s\t", s.frontier(m, fam, eps))
				}
				fmt.Fprint(tw, "\n")
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
	if len(s.FixedPoints) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nfixed noise scale %.4g: the eps it buys at each lambda (Corollary 13) and the test accuracy\n", s.FixedScale)
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "lambda\teps\tmean\tstd\t\n")
	for _, p := range s.FixedPoints {
		fmt.Fprintf(tw, "%.4g\t%.4g\t%.4f\t%.4f\t\n", p.Lambda, p.Epsilon, p.Acc.Mean, p.Acc.Std)
	}
	return tw.Flush()
}

// dataName names the data of an experiment in titles and tables: the CSV
// file's base name for the csv data set, the data set's name otherwise.
func dataName(dataset, file string) string {
	if file != "" {
		return file
	}
	return dataset
}

// mechLabel names a mechanism with its delta when it has one.
func (s Summary) mechLabel(m string) string {
	if dp.Mechanism(m).Pure() || s.PrivacyDelta == 0 {
		return m
	}
	return fmt.Sprintf("%s (delta %g)", m, s.PrivacyDelta)
}

func (s Summary) best(m string, eps float64) Stat {
	for _, b := range s.Best {
		if b.Mechanism == m && b.Epsilon == eps {
			return b.Stat
		}
	}
	return Stat{Mean: math.NaN()}
}

func (s Summary) selected(eps float64) Stat {
	for _, p := range s.Selected {
		if p.Epsilon == eps {
			return p.Stat
		}
	}
	return Stat{Mean: math.NaN()}
}

func (s Summary) frontier(m, fam string, eps float64) string {
	for _, p := range s.Frontier {
		if p.Mechanism == m && p.Family == fam && p.Epsilon == eps {
			return fmt.Sprintf("%.4f", p.Mean)
		}
	}
	return "-"
}

// cell formats a mean and its std.
func cell(st Stat) string {
	if math.IsNaN(st.Mean) {
		return "-"
	}
	return fmt.Sprintf("%.4f +- %.4f", st.Mean, st.Std)
}

// resultHeader is the header of results.csv.
var resultHeader = []string{"dataset", "mode", "split", "lambda", "epsilon", "privacy_delta", "mechanism", "route",
	"sensitivity", "beta", "noise_scale_name", "noise_scale", "acc_private", "acc_nonprivate", "train_ms", "noise_source",
	"l1_ratio", "clip", "dropout", "batch", "passes", "average", "varied", "eps_select", "eps_release", "majority", "data_file"}

// WriteResultsCSV writes the rows as CSV with a header (results.csv).
func WriteResultsCSV(w io.Writer, rows []Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(resultHeader); err != nil {
		return err
	}
	for _, r := range rows {
		rec := []string{r.Dataset, r.Mode, strconv.Itoa(r.Split), fmtG(r.Lambda), fmtG(r.Epsilon), fmtG(r.PrivacyDelta),
			r.Mechanism, r.Route, fmtG(r.Sensitivity), fmtG(r.Beta), r.NoiseScaleName, fmtG(r.NoiseScale),
			fmtG(r.AccPrivate), fmtG(r.AccNonPrivate), strconv.FormatFloat(r.TrainTime.Seconds()*1e3, 'f', 3, 64), r.NoiseSource,
			fmtG(r.Setting.L1Ratio), fmtG(r.Setting.Clip), fmtG(r.Setting.Dropout), strconv.Itoa(r.Setting.Batch),
			strconv.Itoa(r.Setting.Passes), strconv.FormatBool(r.Setting.Average), r.Setting.Varied, fmtG(r.EpsSelect), fmtG(r.EpsRelease), fmtG(r.Majority), r.DataFile}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func fmtG(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// chosenList formats the counts of the chosen families, most chosen first
// ("gamma clip x4, objective lambda x3").
func chosenList(chosen map[string]int) string {
	names := slices.Collect(maps.Keys(chosen))
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(chosen[b], chosen[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s x%d", n, chosen[n])
	}
	return strings.Join(parts, ", ")
}
