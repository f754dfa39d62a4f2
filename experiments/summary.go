package experiments

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"text/tabwriter"
)

// Stat is a mean and a sample standard deviation over N splits (Std is 0
// for N = 1).
type Stat struct {
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
	N    int     `json:"n"`
}

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

// Best is the lambda with the best mean test accuracy at one eps.
type Best struct {
	// Epsilon is 0 for the non-private row.
	Epsilon float64 `json:"epsilon,omitempty"`
	Lambda  float64 `json:"lambda"`
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
	Dataset      string    `json:"dataset"`
	Mechanism    string    `json:"mechanism"`
	PrivacyDelta float64   `json:"privacy_delta"`
	Splits       int       `json:"splits"`
	Lambdas      []float64 `json:"lambdas"`
	Epsilons     []float64 `json:"epsilons"`
	Rows         int       `json:"rows"`
	// Best holds, per eps, the lambda of the best mean private test
	// accuracy over the splits, with its mean and std.
	Best []Best `json:"best"`
	// NonPrivate is the best mean test accuracy of the noise-free models.
	NonPrivate Best `json:"nonprivate"`
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

// best returns the point of c with the largest mean.
func (c curve) best() (float64, Stat) {
	bi := -1
	for i, s := range c.stats {
		if bi < 0 || s.Mean > c.stats[bi].Mean {
			bi = i
		}
	}
	if bi < 0 {
		return math.NaN(), Stat{Mean: math.NaN(), Std: math.NaN()}
	}
	return c.lambdas[bi], c.stats[bi]
}

// epsilonCurve returns the private accuracy per lambda at eps.
func epsilonCurve(rows []Result, eps float64) curve {
	return collect(rows, func(r Result) bool { return r.Mode == Calibrated && r.Epsilon == eps },
		func(r Result) float64 { return r.AccPrivate })
}

// nonPrivateCurve returns the noise-free accuracy per lambda (one value per
// split and lambda).
func nonPrivateCurve(rows []Result) curve {
	first := map[[2]float64]bool{}
	return collect(rows, func(r Result) bool {
		k := [2]float64{float64(r.Split), r.Lambda}
		if r.Mode != Calibrated || first[k] {
			return false
		}
		first[k] = true
		return true
	}, func(r Result) float64 { return r.AccNonPrivate })
}

// Summarize condenses the rows of a sweep; notes are copied into it.
func Summarize(rows []Result, notes ...string) Summary {
	s := Summary{Rows: len(rows), Notes: slices.Clone(notes)}
	splits := map[int]bool{}
	for _, r := range rows {
		splits[r.Split] = true
		if s.Dataset == "" {
			s.Dataset, s.Mechanism, s.PrivacyDelta = r.Dataset, r.Mechanism, r.PrivacyDelta
		}
		if !slices.Contains(s.Lambdas, r.Lambda) {
			s.Lambdas = append(s.Lambdas, r.Lambda)
		}
		if r.Mode == Calibrated && !slices.Contains(s.Epsilons, r.Epsilon) {
			s.Epsilons = append(s.Epsilons, r.Epsilon)
		}
		if r.Mode == FixedScale {
			s.FixedScale = r.NoiseScale
		}
	}
	s.Splits = len(splits)
	slices.Sort(s.Lambdas)
	slices.Sort(s.Epsilons)
	for _, eps := range s.Epsilons {
		l, st := epsilonCurve(rows, eps).best()
		s.Best = append(s.Best, Best{Epsilon: eps, Lambda: l, Stat: st})
	}
	l, st := nonPrivateCurve(rows).best()
	s.NonPrivate = Best{Lambda: l, Stat: st}
	fixed := func(r Result) bool { return r.Mode == FixedScale }
	acc := collect(rows, fixed, func(r Result) float64 { return r.AccPrivate })
	eps := collect(rows, fixed, func(r Result) float64 { return r.Epsilon })
	for i, l := range acc.lambdas {
		s.FixedPoints = append(s.FixedPoints, FixedPoint{Lambda: l, Epsilon: eps.stats[i].Mean, Acc: acc.stats[i]})
	}
	return s
}

// WriteTable writes the best mean test accuracy per eps (best lambda) with
// its std over the splits, the non-private row, and the fixed-scale points.
func (s Summary) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "%s, %s noise, %d splits: best mean test accuracy per eps (best lambda), std over the splits\n", s.Dataset, s.Mechanism, s.Splits)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "eps\tdelta\tlambda\tmean\tstd\t\n")
	for _, b := range s.Best {
		fmt.Fprintf(tw, "%g\t%g\t%.4g\t%.4f\t%.4f\t\n", b.Epsilon, s.PrivacyDelta, b.Lambda, b.Mean, b.Std)
	}
	fmt.Fprintf(tw, "non-private\t\t%.4g\t%.4f\t%.4f\t\n", s.NonPrivate.Lambda, s.NonPrivate.Mean, s.NonPrivate.Std)
	if err := tw.Flush(); err != nil || len(s.FixedPoints) == 0 {
		return err
	}
	fmt.Fprintf(w, "\nfixed noise scale %.4g: the eps it buys at each lambda (Corollary 13) and the test accuracy\n", s.FixedScale)
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "lambda\teps\tmean\tstd\t\n")
	for _, p := range s.FixedPoints {
		fmt.Fprintf(tw, "%.4g\t%.4g\t%.4f\t%.4f\t\n", p.Lambda, p.Epsilon, p.Acc.Mean, p.Acc.Std)
	}
	return tw.Flush()
}

// resultHeader is the header of results.csv.
var resultHeader = []string{"dataset", "mode", "split", "lambda", "epsilon", "privacy_delta", "mechanism", "route",
	"sensitivity", "beta", "noise_scale_name", "noise_scale", "acc_private", "acc_nonprivate", "train_ms", "noise_source"}

// WriteResultsCSV writes the rows as CSV with a header (results.csv).
func WriteResultsCSV(w io.Writer, rows []Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(resultHeader); err != nil {
		return err
	}
	for _, r := range rows {
		rec := []string{r.Dataset, r.Mode, strconv.Itoa(r.Split), fmtG(r.Lambda), fmtG(r.Epsilon), fmtG(r.PrivacyDelta),
			r.Mechanism, r.Route, fmtG(r.Sensitivity), fmtG(r.Beta), r.NoiseScaleName, fmtG(r.NoiseScale),
			fmtG(r.AccPrivate), fmtG(r.AccNonPrivate), strconv.FormatFloat(r.TrainTime.Seconds()*1e3, 'f', 3, 64), r.NoiseSource}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func fmtG(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
