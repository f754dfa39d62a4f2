package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/bench/defaults/internal/results"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
)

// The wide synthetic data set of the projection fit: n rows of d features
// whose signal lies in r latent factors (x = U z + e, like expression
// data), rows scaled into the unit ball; P(y = +1 | z) logistic in z.
const (
	wideN    = 600
	wideD    = 5000
	wideRank = 5
	wideSeed = 11
	// adultSmall is the number of rows of the Adult subsample of the fit.
	adultSmall = 300
)

// maxProjectK is the largest k of the grid.
const maxProjectK = 512

// projectSets are the data sets of the fit of preprocess.AutoProjectC.
var projectSets = []string{"gene_all", "synthetic_wide", "adult_raw_small", "lastfm"}

// projectEpsilons are its budgets.
var projectEpsilons = []float64{0.5, 1, 2}

// prepareWide writes the wide synthetic data set.
func prepareWide(path string) (dataSet, error) {
	r := rand.New(rand.NewPCG(wideSeed, 0x77696465))
	U := mat.NewDense(wideD, wideRank, nil)
	for i := range wideD {
		for j := range wideRank {
			U.Set(i, j, r.NormFloat64())
		}
	}
	theta := make([]float64, wideRank)
	for j := range theta {
		theta[j] = 2 * r.NormFloat64()
	}
	X := mat.NewDense(wideN, wideD, nil)
	y := make([]float64, wideN)
	z := make([]float64, wideRank)
	for i := range wideN {
		m := 0.0
		for j := range z {
			z[j] = r.NormFloat64()
			m += theta[j] * z[j]
		}
		row := X.RawRowView(i)
		nrm := 0.0
		for a := range wideD {
			v := r.NormFloat64()
			for j := range z {
				v += U.At(a, j) * z[j]
			}
			row[a] = v
			nrm += v * v
		}
		for a := range row {
			row[a] /= math.Sqrt(nrm)
		}
		y[i] = -1
		if r.Float64() < 1/(1+math.Exp(-m)) {
			y[i] = 1
		}
	}
	ds := &datasets.Dataset{X: X, Y: y, Classes: []string{"-1", "+1"}}
	return writeSet(ds, "synthetic_wide", path, "y", fmt.Sprintf("wide synthetic data: n = %d rows of d = %d features x = U z + e (z in %d latent factors, U and e standard normal), rows scaled to norm 1, y logistic in z (seed %d)", wideN, wideD, wideRank, wideSeed))
}

// prepareHead writes the first rows of the data set ds's file.
func prepareHead(ds dataSet, name, path string, rows int) (dataSet, error) {
	data, err := os.ReadFile(ds.file)
	if err != nil {
		return dataSet{}, err
	}
	lines := strings.SplitN(string(data), "\n", rows+2)
	if err := os.WriteFile(path, []byte(strings.Join(lines[:min(len(lines), rows+1)], "\n")+"\n"), 0o644); err != nil {
		return dataSet{}, err
	}
	ds.name, ds.file = name, path
	ds.made = fmt.Sprintf("the first %d rows of %s", rows, ds.made)
	return ds, nil
}

// projectKs returns the grid of k for w mapped features: 0 (none) and the
// powers of 2 below w, up to maxProjectK (the process keeps every
// projection matrix it builds: one per seed).
func projectKs(w int) []int {
	ks := []int{0}
	for k := 2; k < w && k <= maxProjectK; k *= 2 {
		ks = append(ks, k)
	}
	return ks
}

// runProject writes project.csv: the default fit (holdout selection) with
// --project k over the grid of k, per data set, budget and seed.
func runProject(ctx context.Context, dss []dataSet, out string, seeds, workers int) error {
	f, err := os.Create(filepath.Join(out, "project.csv"))
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.Write([]string{"dataset", "n", "w", "outputs", "epsilon", "k", "seed", "accuracy", "majority"})
	for _, ds := range dss {
		n, dim, err := shape(ds)
		if err != nil {
			return err
		}
		width := dim - 1
		var jobs []job
		for _, eps := range projectEpsilons {
			for _, k := range projectKs(width) {
				for seed := 1; seed <= seeds; seed++ {
					a := append(budgetArgs(eps, 0, seed), "--project", strconv.Itoa(k))
					jobs = append(jobs, job{ds: ds, eps: eps, seed: seed, s: setting{lambda: float64(k)}, args: a})
				}
			}
		}
		logf("%s: %d projection fits (n = %d, w = %d)", ds.name, len(jobs), n, width)
		runJobs(ctx, jobs, workers, func(j job, o outcome, err error) {
			if err != nil {
				logf("%s: %v", ds.name, err)
				return
			}
			w.Write([]string{ds.name, strconv.Itoa(n), strconv.Itoa(width), strconv.Itoa(outputs(ds)), fmt.Sprint(j.eps), fmt.Sprint(int(j.s.lambda)),
				strconv.Itoa(j.seed), fmt.Sprint(o.released), fmt.Sprint(o.majority)})
		})
		w.Flush()
	}
	return w.Error()
}

// projectTable returns the table of the projection fit from project.csv:
// per data set and budget the best k of the grid, the rule's k, the
// accuracy at each and without projection, and the constant c that the
// best k's with 0 < k < w imply (their geometric mean over the budgets
// where the best k is above the majority class by more than two standard
// errors: elsewhere every k is within noise of it, and the best k is
// noise).
func projectTable(out string) (string, error) {
	rows, err := results.Read(filepath.Join(out, "project.csv"))
	if err != nil {
		return "", err
	}
	type key struct {
		set string
		eps float64
	}
	acc := map[key]map[int][]float64{}
	maj := map[key][]float64{}
	shapes := map[string][3]int{}
	var order []key
	for _, r := range rows {
		kk := key{r["dataset"], results.Num(r, "epsilon")}
		if acc[kk] == nil {
			acc[kk] = map[int][]float64{}
			order = append(order, kk)
		}
		k := int(results.Num(r, "k"))
		acc[kk][k] = append(acc[kk][k], results.Num(r, "accuracy"))
		if k == 0 {
			maj[kk] = append(maj[kk], results.Num(r, "majority"))
		}
		shapes[r["dataset"]] = [3]int{int(results.Num(r, "n")), int(results.Num(r, "w")), int(results.Num(r, "outputs"))}
	}
	var b strings.Builder
	head := []string{"data", "n, w, K", "eps", "best k (accuracy)", "no projection", "rule's k (c = " + fmt.Sprint(preprocess.AutoProjectC) + ")", "accuracy at the grid k nearest the rule's", "majority", "c implied by the best k"}
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	var logs, all []float64
	for _, kk := range order {
		sh := shapes[kk.set]
		var ks []int
		for k := range acc[kk] {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		best := ks[0]
		for _, k := range ks {
			if results.Above(results.StatOf(acc[kk][k]).Mean, results.StatOf(acc[kk][best]).Mean) {
				best = k
			}
		}
		scale := math.Pow(float64(sh[0])*kk.eps/float64(sh[2]), 2.0/3)
		implied := "-"
		if best > 0 {
			implied = fmt.Sprintf("%.2g", float64(best)/scale)
			all = append(all, math.Log(float64(best)/scale))
			if b := results.StatOf(acc[kk][best]); b.Mean-results.StatOf(maj[kk]).Mean > 2*b.SD/math.Sqrt(float64(b.N)) {
				// The best k's accuracy is above the majority class by
				// more than two standard errors: its k says something.
				logs = append(logs, math.Log(float64(best)/scale))
			} else {
				implied += " (at the majority)"
			}
		}
		rule, err := preprocess.AutoProjectDim(sh[0], sh[1], sh[2], kk.eps)
		if err != nil {
			return "", err
		}
		near := 0
		if rule > 0 {
			near = ks[len(ks)-1]
			for _, k := range ks {
				if k > 0 && math.Abs(math.Log(float64(k)/float64(rule))) < math.Abs(math.Log(float64(near)/float64(rule))) {
					near = k
				}
			}
		}
		bestName := strconv.Itoa(best)
		if best == 0 {
			bestName = "none"
		}
		ruleName := strconv.Itoa(rule)
		if rule == 0 {
			ruleName = "none"
		}
		fmt.Fprintf(&b, "| %s | %d, %d, %d | %g | %s (%s) | %s | %s | %s (k = %d) | %.3f | %s |\n", kk.set, sh[0], sh[1], sh[2], kk.eps, bestName, results.StatOf(acc[kk][best]),
			results.StatOf(acc[kk][0]), ruleName, results.StatOf(acc[kk][near]), near, results.StatOf(maj[kk]).Mean, implied)
	}
	if len(logs) > 0 {
		fmt.Fprintf(&b, "\nThe geometric mean of the implied c over the budgets whose best k projects and is above the majority class by more than two standard errors (preprocess.AutoProjectC, rounded to two digits): %.2g (%d budgets); over every budget whose best k projects: %.2g (%d budgets).\n",
			math.Exp(results.StatOf(logs).Mean), len(logs), math.Exp(results.StatOf(all).Mean), len(all))
	}
	return b.String(), nil
}
