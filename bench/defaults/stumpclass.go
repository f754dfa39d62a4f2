package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/bench/defaults/internal/results"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/stump"
)

// runStumpClass writes stumpclass.csv and stumpclass.md: for every data
// set, pure budget of the grid and seed where the rule releases a stump,
// the stump refitted on the rows the rule's stump saw (the same split and
// stump map, seeded, at the release's eps) from the one-feature class
// (stump.Fit, stump.FitMulti: the class before the pairs and intervals)
// and from today's class (stump.FitBinary, stump.FitMultiClass: with the
// pairs or intervals where their guarantee holds), and each one's test
// accuracy (null test rows count as errors) with the release's eps, the
// training rows n, the mapped features p and the classes; then
// stumpClassTable, which also judges the families leave-one-data-set-out,
// and a stricter rule for the pairs (pairsLossTable).
func runStumpClass(ctx context.Context, dss []dataSet, out string, seeds, workers int) error {
	header := []string{"dataset", "epsilon", "seed", "class", "families", "accuracy", "release_epsilon", "n", "p", "classes"}
	keep := func(ds dataSet) bool { return len(ds.classes) <= stump.MaxClasses }
	rows, err := runStumpRefits(ctx, dss, filepath.Join(out, "stumpclass.csv"), header, keep, seeds, workers, stumpClasses)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "stumpclass.md"), []byte(stumpClassTable(rows)), 0o644)
}

// runStumpRefits runs the rule (seeded, budgetArgs) on every data set that
// keep accepts, at every pure budget of the grid and seed, and for each
// release of a stump calls refit with the rows the stump saw
// (ruleStumpRows); refit writes its rows to the CSV file at path (with
// header), which is read back and returned.
func runStumpRefits(ctx context.Context, dss []dataSet, path string, header []string, keep func(dataSet) bool, seeds, workers int, refit func(job, *stumpRows, *csv.Writer) error) ([]map[string]string, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	w.Write(header)
	var jobs []job
	for _, ds := range dss {
		if !keep(ds) {
			continue
		}
		for _, eps := range gridEpsilons(ds.name) {
			for seed := 1; seed <= seeds; seed++ {
				jobs = append(jobs, job{ds: ds, eps: eps, seed: seed, args: budgetArgs(eps, 0, seed)})
			}
		}
	}
	var firstErr error
	runJobs(ctx, jobs, workers, func(j job, o outcome, err error) {
		var r *stumpRows
		if err == nil {
			r, err = ruleStumpRows(j, o)
		}
		if err == nil && r != nil {
			err = refit(j, r, w)
		}
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s eps %g seed %d: %w", j.ds.name, j.eps, j.seed, err)
		}
	})
	if firstErr != nil {
		return nil, firstErr
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, err
	}
	return results.Read(path)
}

// stumpRows are the rows a rule's stump saw: its budget's eps, the
// number K of classes, the training rows' per-feature map Z (the stump
// map's rows without the bias), labels and null marks, and the test rows
// of the stump map ([z, 1]) with theirs.
type stumpRows struct {
	eps      float64
	K        int
	Z        mat.Matrix
	y        []float64
	null     []bool
	Xte      *mat.Dense
	yte      []float64
	nullTest []bool
}

// ruleStumpRows returns the rows the rule's stump of the job's outcome
// saw (the released schema, with any column the fit typed categorical,
// and a text cell in a numeric column missing, as the fit read them; the
// same split and stump map), or nil when the rule released another
// mechanism.
func ruleStumpRows(j job, o outcome) (*stumpRows, error) {
	rel := o.rel
	if rel == nil || rel.Certificate == nil || rel.Certificate.Mechanism != perturb.Stump || rel.Preprocessing == nil {
		return nil, nil
	}
	eps, err := strconv.ParseFloat(releaseEpsilon(rel), 64)
	if err != nil {
		return nil, err
	}
	run, t, err := parseRun(j.ds, j.args)
	if err != nil {
		return nil, err
	}
	r := &stumpRows{eps: eps, K: len(rel.Schema.Classes)}
	task := losses.Binary
	if r.K > 2 {
		task = losses.Multiclass
	}
	enc, err := t.EncodeText(rel.Schema, task, datasets.TextMissing)
	if err != nil {
		return nil, err
	}
	train, test, err := enc.Split(run.Options.TestFrac, run.Options.Seed, false)
	if err != nil {
		return nil, err
	}
	Xtr, y, null, err := rel.Preprocessing.Rows(enc, train)
	if err != nil {
		return nil, err
	}
	if r.Xte, r.yte, r.nullTest, err = rel.Preprocessing.Rows(enc, test); err != nil {
		return nil, err
	}
	n, d := Xtr.Dims()
	r.Z, r.y, r.null = Xtr.Slice(0, n, 0, d-1), y, null
	return r, nil
}

// stumpClasses refits the rule's stump from the one-feature class and
// from today's class on the rows r and writes a row for each to w.
func stumpClasses(j job, r *stumpRows, w *csv.Writer) error {
	n, p := r.Z.Dims()
	cfg := stump.Config{Epsilon: r.eps}
	write := func(class string, families bool, predict func(z []float64) float64) {
		w.Write([]string{j.ds.name, fmt.Sprint(j.eps), strconv.Itoa(j.seed), class, strconv.FormatBool(families), fmt.Sprint(stumpAccuracy(predict, r.Xte, r.yte, r.nullTest)),
			fmt.Sprint(r.eps), strconv.Itoa(n), strconv.Itoa(p), strconv.Itoa(r.K)})
	}
	src := func() perturb.Source { return perturb.Seeded(uint64(j.seed)) }
	if K := r.K; K > 2 {
		one, err := stump.FitMulti(r.Z, r.y, r.null, K, cfg, src())
		if err != nil {
			return err
		}
		write("one-feature", false, func(z []float64) float64 { return float64(one.Predict(z, stump.MultiGrid)) })
		cur, err := stump.FitMultiClass(r.Z, r.y, r.null, K, cfg, src())
		if err != nil {
			return err
		}
		write("current", stump.IntervalsUseful(r.eps, n, p, stump.MultiGrid, K), func(z []float64) float64 { return float64(cur.Predict(z, stump.MultiGrid)) })
		return nil
	}
	one, err := stump.Fit(r.Z, r.y, r.null, cfg, src())
	if err != nil {
		return err
	}
	write("one-feature", false, func(z []float64) float64 { return one.Predict(z, stump.DefaultGrid) })
	cur, err := stump.FitBinary(r.Z, r.y, r.null, cfg, src())
	if err != nil {
		return err
	}
	write("current", stump.PairsUseful(r.eps, n, p, stump.DefaultGrid), func(z []float64) float64 { return cur.Predict(z, stump.DefaultGrid) })
	return nil
}

// stumpAccuracy is the share of the rows of X (the stump map's [z, 1])
// that predict classifies as y, a null row counting as an error.
func stumpAccuracy(predict func(z []float64) float64, X *mat.Dense, y []float64, null []bool) float64 {
	n, d := X.Dims()
	right := 0
	for i := range n {
		if !null[i] && predict(X.RawRowView(i)[:d-1]) == y[i] {
			right++
		}
	}
	return float64(right) / float64(max(n, 1))
}

// stumpClassTable returns stumpclass.md from the rows of stumpclass.csv
// (dataset, epsilon, seed, class, families, accuracy): per data set and
// budget the mean test accuracy of the one-feature class and of today's
// (and whether today's held the pairs or intervals); then the
// leave-one-data-set-out judgement of the two choices "one-feature class
// always" and "today's class" (the families where their guarantee holds):
// for each data set held out, the choice with the better mean over the
// other data sets (the one-feature class on a tie) and the held-out mean
// under it.
func stumpClassTable(rows []map[string]string) string {
	type key struct{ set, eps, class string }
	acc := map[key][]float64{}
	fam := map[key]bool{}
	var sets, epss []string
	for _, r := range rows {
		a, err := strconv.ParseFloat(r["accuracy"], 64)
		if err != nil {
			continue
		}
		k := key{r["dataset"], r["epsilon"], r["class"]}
		acc[k] = append(acc[k], a)
		fam[k] = fam[k] || r["families"] == "true"
		if !slices.Contains(sets, r["dataset"]) {
			sets = append(sets, r["dataset"])
		}
		if !slices.Contains(epss, r["epsilon"]) {
			epss = append(epss, r["epsilon"])
		}
	}
	sort.Strings(sets)
	sort.Slice(epss, func(i, j int) bool {
		a, _ := strconv.ParseFloat(epss[i], 64)
		b, _ := strconv.ParseFloat(epss[j], 64)
		return a < b
	})
	classes := []string{"one-feature", "current"}
	var b strings.Builder
	b.WriteString("The stump's class: the rule's stump refitted on the same mapped rows, budget and seed from the one-feature (one-threshold) class and from today's class, which adds the pairs of features (two classes) or the two-threshold intervals (three or more) where their guarantee holds (`stump.PairsUseful`, `stump.IntervalsUseful`; * marks a budget where they were in the class). Test accuracy, mean over seeds.\n\n")
	b.WriteString("| data | eps | one-feature class | today's class |\n|---|---|---|---|\n")
	setMean := map[key]float64{} // over budgets, per set and class
	for _, s := range sets {
		for _, e := range epss {
			one, cur := acc[key{s, e, classes[0]}], acc[key{s, e, classes[1]}]
			if len(one) == 0 || len(cur) == 0 {
				continue
			}
			mark := ""
			if fam[key{s, e, classes[1]}] {
				mark = " *"
			}
			fmt.Fprintf(&b, "| %s | %s | %.4f | %.4f%s |\n", s, e, avg(one), avg(cur), mark)
		}
		for _, c := range classes {
			var all []float64
			for _, e := range epss {
				all = append(all, acc[key{s, e, c}]...)
			}
			if len(all) > 0 {
				setMean[key{s, "", c}] = avg(all)
			}
		}
	}
	b.WriteString("\nLeave-one-data-set-out: for each data set held out, the class with the better mean over the other data sets (mean over their budgets and seeds; the one-feature class on a tie), and the held-out mean under it and under today's class.\n\n| held out | chosen on the others | held-out accuracy (chosen) | held-out accuracy (today's) |\n|---|---|---|---|\n")
	for _, h := range sets {
		if _, ok := setMean[key{h, "", classes[1]}]; !ok {
			continue
		}
		var m [2]float64
		cnt := 0
		for _, s := range sets {
			a, ok1 := setMean[key{s, "", classes[0]}]
			c, ok2 := setMean[key{s, "", classes[1]}]
			if s == h || !ok1 || !ok2 {
				continue
			}
			m[0] += a
			m[1] += c
			cnt++
		}
		chosen := classes[0]
		if cnt > 0 && m[1] > m[0] {
			chosen = classes[1]
		}
		fmt.Fprintf(&b, "| %s | %s | %.4f | %.4f |\n", h, chosen, setMean[key{h, "", chosen}], setMean[key{h, "", classes[1]}])
	}
	b.WriteString(pairsLossTable(rows))
	return b.String()
}

// pairsLoss is the extra expected loss, as a share of the n training rows,
// that the pairs add to the binary selection's guarantee at eps for p
// mapped features: (2/eps) ln(N/N1) / n for the exponential mechanism's
// bound (2/eps) ln N on the expected excess errors over the best of N
// candidates (Dwork & Roth 2014, Theorem 3.11; permute-and-flip's is no
// larger), N = stump.BinaryCandidates and N1 = stump.Candidates on
// stump.DefaultGrid. Public values only.
func pairsLoss(eps float64, n, p int) float64 {
	T := stump.DefaultGrid
	return 2 / eps * math.Log(float64(stump.BinaryCandidates(p, T))/float64(stump.Candidates(p, T))) / float64(n)
}

// pairsLossGrid are the shares g of the rule judged by pairsLossTable: 0
// to 0.1 by 0.001.
var pairsLossGrid = func() []float64 {
	g := make([]float64, 101)
	for i := range g {
		g[i] = float64(i) / 1000
	}
	return g
}()

// pairsLossTable returns the leave-one-data-set-out judgement of a rule
// stricter than today's for the pairs (two classes): offer them only where
// today's rule does and pairsLoss <= g, the pairs' extra loss at most a
// share g of the rows. From the binary rows of stumpclass.csv with their
// release's eps, n, p and classes (none: ""), for each seed the accuracy of today's
// class where the rule offers the pairs and of the one-feature class
// elsewhere; g is fitted on the other data sets (the interval of g with
// the best mean of their means; the held-out mean at its lower end, the
// rule that offers the pairs least, and at its middle), beside today's.
func pairsLossTable(rows []map[string]string) string {
	type draw struct {
		loss     float64
		one, cur float64
	}
	bySet := map[string][]draw{}
	type seedKey struct{ set, eps, seed string }
	one, cur := map[seedKey]float64{}, map[seedKey]map[string]string{}
	for _, r := range rows {
		if r["families"] == "" || r["n"] == "" {
			continue
		}
		k := seedKey{r["dataset"], r["epsilon"], r["seed"]}
		a, err := strconv.ParseFloat(r["accuracy"], 64)
		if err != nil {
			continue
		}
		if r["class"] == "one-feature" {
			one[k] = a
		} else if r["class"] == "current" {
			cur[k] = r
		}
	}
	for k, r := range cur {
		o, ok := one[k]
		eps, err1 := strconv.ParseFloat(r["release_epsilon"], 64)
		n, err2 := strconv.Atoi(r["n"])
		p, err3 := strconv.Atoi(r["p"])
		c, err4 := strconv.ParseFloat(r["accuracy"], 64)
		if !ok || errors.Join(err1, err2, err3, err4) != nil || r["classes"] != "2" {
			continue
		}
		loss := math.Inf(1) // today's rule leaves the pairs out: so does every g
		if r["families"] == "true" {
			loss = pairsLoss(eps, n, p)
		}
		bySet[k.set] = append(bySet[k.set], draw{loss, o, c})
	}
	if len(bySet) == 0 {
		return ""
	}
	sets := slices.Sorted(maps.Keys(bySet))
	mean := func(set string, g float64) float64 {
		var a []float64
		for _, d := range bySet[set] {
			if d.loss <= g {
				a = append(a, d.cur)
			} else {
				a = append(a, d.one)
			}
		}
		return avg(a)
	}
	var b strings.Builder
	b.WriteString("\nA stricter rule for the pairs (two classes): offer them where today's rule does and their extra expected loss, (2/eps) ln(N/N1) for N candidates with the pairs and N1 without (the exponential mechanism's bound), is at most g n, a public function of eps, n and p. g (0 to 0.1 by 0.001) fitted on the other binary data sets: the interval of g with their best mean; the held-out mean at its lower end (the pairs offered least) and at its middle, and under today's rule (g unbounded).\n\n| held out | best g on the others | held-out (lower end) | held-out (middle) | held-out (today's) |\n|---|---|---|---|---|\n")
	for _, h := range sets {
		best, lo, hi := math.Inf(-1), 0, 0
		for i, g := range pairsLossGrid {
			t := 0.0
			for _, s := range sets {
				if s != h {
					t += mean(s, g)
				}
			}
			switch {
			case t > best+1e-12:
				best, lo, hi = t, i, i
			case t > best-1e-12 && hi == i-1:
				hi = i
			}
		}
		mid := (lo + hi) / 2
		fmt.Fprintf(&b, "| %s | [%.3f, %.3f] | %.4f | %.4f | %.4f |\n", h, pairsLossGrid[lo], pairsLossGrid[hi], mean(h, pairsLossGrid[lo]), mean(h, pairsLossGrid[mid]), mean(h, math.Inf(1)))
	}
	return b.String()
}

// avg is the mean of x (0 for none).
func avg(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
