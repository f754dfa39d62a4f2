package loo

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// StumpGrids are the binary stump's grids (thresholds per column) the
// benchmark's task stumpgrid compares, stump.DefaultGrid among them.
var StumpGrids = []int{63, 127, 255, 511, 1023, 4095}

// StumpGrid returns stumpgrid.md, the leave-one-data-set-out judgement of
// stump.DefaultGrid (current) from the rows of stumpgrid.csv (dataset,
// epsilon, seed, grid, accuracy): every grid's mean test accuracy per data
// set (over its budgets and seeds), and for each data set held out, the
// grid with the best mean over the others (the smaller on a tie) and the
// held-out accuracy under it against the current grid's.
func StumpGrid(rows []map[string]string, current int) string {
	// acc[set][grid] collects the accuracies.
	acc := map[string]map[int][]float64{}
	for _, r := range rows {
		g, err1 := strconv.Atoi(r["grid"])
		a, err2 := strconv.ParseFloat(r["accuracy"], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if acc[r["dataset"]] == nil {
			acc[r["dataset"]] = map[int][]float64{}
		}
		acc[r["dataset"]][g] = append(acc[r["dataset"]][g], a)
	}
	sets := make([]string, 0, len(acc))
	for s := range acc {
		sets = append(sets, s)
	}
	sort.Strings(sets)
	var grids []int
	for _, g := range StumpGrids {
		complete := len(sets) > 0
		for _, s := range sets {
			complete = complete && len(acc[s][g]) > 0
		}
		if complete {
			grids = append(grids, g)
		}
	}
	var b strings.Builder
	b.WriteString("The binary stump's grid (`stump.DefaultGrid`), judged leave-one-data-set-out: the rule's stump refitted at each grid on the same mapped rows, budget and seed (test accuracy, mean over budgets and seeds).\n\n")
	if len(grids) == 0 {
		b.WriteString("No data set has a result at every grid.\n")
		return b.String()
	}
	mean := func(s string, g int) float64 { return avg(acc[s][g]) }
	head := []string{"data"}
	for _, g := range grids {
		head = append(head, strconv.Itoa(g))
	}
	head = append(head, "grid fitted without it", "held out", fmt.Sprintf("at %d", current))
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, s := range sets {
		cells := []string{s}
		for _, g := range grids {
			cells = append(cells, fmt.Sprintf("%.3f", mean(s, g)))
		}
		others := slices.DeleteFunc(slices.Clone(sets), func(o string) bool { return o == s })
		best := bestGrid(grids, others, mean)
		cur := "-"
		if slices.Contains(grids, current) {
			cur = fmt.Sprintf("%.3f", mean(s, current))
		}
		if best == 0 {
			cells = append(cells, "- (no other data set)", "-", cur)
		} else {
			cells = append(cells, strconv.Itoa(best), fmt.Sprintf("%.3f", mean(s, best)), cur)
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintf(&b, "\nFitted on every data set: %d.\n", bestGrid(grids, sets, mean))
	return b.String()
}

// bestGrid returns the grid of grids with the largest mean over sets of
// mean(set, grid) (the smaller grid on a tie), or 0 for no sets.
func bestGrid(grids []int, sets []string, mean func(string, int) float64) int {
	if len(sets) == 0 {
		return 0
	}
	best, bestV := 0, 0.0
	for _, g := range grids {
		var v float64
		for _, s := range sets {
			v += mean(s, g)
		}
		if v /= float64(len(sets)); best == 0 || v > bestV {
			best, bestV = g, v
		}
	}
	return best
}

// avg is the mean of v (0 for none).
func avg(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
