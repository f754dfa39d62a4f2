// Command idrule measures the public rule of a fit per privacy ID against
// a grid of fixed lambdas: a CSV gets a synthetic privacy ID, row number / c
// (c rows per ID, the last ID perhaps fewer), and is fitted per privacy ID
// (partition.Fit with --max-rows-per-id c) by the rule and by the rule's
// mechanism at each lambda of the grid with the rule's clipping norm and
// schedule, on seeds 1..S of the split and of the seeded noise. It prints,
// per budget and c, the rule's lambda and mean test accuracy (the rows of
// the held-out IDs), the accuracy at the rule's lambda for rows (without
// the group's factor sqrt(c)), and the grid's best lambda and its mean
// accuracy (chosen on the test rows: optimistic, not private). docs/RESULTS.md quotes it; it
// is not part of `make test`.
//
// Usage:
//
//	go run ./bench/idrule -data out/paper/defaults/data/adult.csv -label income -classes '<=50K,>50K' [-c 1,3] [-seeds 3] [-eps 0.5,1]
//
// The CSV is one of bench/defaults' prepared files (their features are
// public inputs in the unit ball: preprocessing none).
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/partition"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release/autoknobs"
	"github.com/stabpriv/stabpriv/selection"
	"github.com/stabpriv/stabpriv/trainer"
)

const (
	idColumn = "uid"
	testFrac = 0.2
)

func main() {
	data := flag.String("data", "", "prepared CSV (bench/defaults)")
	label := flag.String("label", "income", "label column")
	classes := flag.String("classes", "<=50K,>50K", "declared classes")
	cs := flag.String("c", "1,3", "rows per privacy ID")
	epss := flag.String("eps", "0.5,1", "budgets (pure eps)")
	seeds := flag.Int("seeds", 3, "seeds of the split and the noise")
	flag.Parse()
	c, err := runflags.Ints("c", *cs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "idrule:", err)
		os.Exit(2)
	}
	eps, err := runflags.Floats("eps", *epss)
	if err != nil {
		fmt.Fprintln(os.Stderr, "idrule:", err)
		os.Exit(2)
	}
	if err := run(*data, *label, strings.Split(*classes, ","), c, eps, *seeds); err != nil {
		fmt.Fprintln(os.Stderr, "idrule:", err)
		os.Exit(1)
	}
}

// withID returns t with a first column uid = "u" + row/c.
func withID(t *datasets.Table, c int) (*datasets.Table, error) {
	rows := make([][]string, t.Len())
	for i := range rows {
		row := make([]string, 0, len(t.Columns)+1)
		row = append(row, "u"+strconv.Itoa(i/c))
		for j := range t.Columns {
			row = append(row, t.Cell(i, j))
		}
		rows[i] = row
	}
	return datasets.NewTable(fmt.Sprintf("ids-%d.csv", c), append([]string{idColumn}, t.Columns...), rows)
}

// accuracy returns the accuracy of r on the rows of t whose ID the split
// held out.
func accuracy(r *modelfile.Released, t *datasets.Table, label string, seed uint64) (float64, error) {
	cols := make([]int, 0, len(r.Features()))
	for _, f := range r.Features() {
		cols = append(cols, slices.Index(t.Columns, f))
	}
	y := slices.Index(t.Columns, label)
	x := make([]float64, len(cols))
	right, all := 0, 0
	for i := range t.Len() {
		if !placement.IDHeldOut(seed, t.Cell(i, 0), testFrac) {
			continue
		}
		for k, j := range cols {
			x[k], _ = t.Value(i, j)
		}
		p, err := r.Predict(x)
		if err != nil {
			return 0, err
		}
		all++
		if p == t.Cell(i, y) {
			right++
		}
	}
	return float64(right) / float64(all), nil
}

func run(path, label string, classes []string, cs []int, epss []float64, seeds int) error {
	raw, err := datasets.ReadTableFile(path)
	if err != nil {
		return err
	}
	schema := datasets.Schema{Label: label, Classes: classes}
	var grid []float64
	for e := -12; e <= 0; e++ {
		grid = append(grid, math.Pow(10, float64(e)/2))
	}
	fmt.Println("| eps | c | IDs | the rule: lambda | the rule: accuracy | the rule for rows' lambda: accuracy | best grid lambda | its accuracy |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, eps := range epss {
		b := dp.Budget{Epsilon: eps}
		for _, c := range cs {
			t, err := withID(raw, c)
			if err != nil {
				return err
			}
			fit := func(seed uint64, opts private.Options) (*modelfile.Released, float64, error) {
				opts.Preprocess, opts.TestFrac, opts.Seed, opts.Noise = preprocess.None, testFrac, seed, perturb.Seeded(seed)
				opts.PrivacyID, opts.MaxRowsPerID = idColumn, c
				r, err := partition.Fit(context.Background(), []*datasets.Table{t}, schema, b, opts, 1)
				if err != nil {
					return nil, 0, err
				}
				acc, err := accuracy(r, t, label, seed)
				return r, acc, err
			}
			var ruleAcc, ruleLambda, rowsAcc float64
			gridAcc := make([]float64, len(grid))
			for s := 1; s <= seeds; s++ {
				seed := uint64(s)
				r, acc, err := fit(seed, private.Options{Select: &selection.Config{}})
				if err != nil {
					return err
				}
				ruleAcc += acc / float64(seeds)
				ruleLambda = r.Certificate.Lambda
				k, err := autoknobs.Choose(r.Split.TrainRows, r.Model.D, r.Model.K, r.Certificate.Mechanism, b)
				if err != nil {
					return err
				}
				// The rule for rows at the same n: lambda without the
				// group's factor.
				cfg := trainer.Config{Reg: regularizers.ElasticNet{Lambda: k.Lambda}, Clip: k.Clip, Schedule: trainer.BoundedInverseT}
				if _, acc, err = fit(seed, private.Options{Mechanism: r.Certificate.Mechanism, Trainer: cfg}); err != nil {
					return err
				}
				rowsAcc += acc / float64(seeds)
				for i, l := range grid {
					cfg := trainer.Config{Reg: regularizers.ElasticNet{Lambda: l}, Clip: k.Clip, Schedule: trainer.BoundedInverseT}
					_, acc, err := fit(seed, private.Options{Mechanism: r.Certificate.Mechanism, Trainer: cfg})
					if err != nil {
						return err
					}
					gridAcc[i] += acc / float64(seeds)
				}
				if s == 1 {
					fmt.Fprintf(os.Stderr, "eps %g, c %d: %d IDs, the rule's lambda %.3g\n", eps, c, r.Partitions.IDs, ruleLambda)
				}
			}
			best := 0
			for i := range grid {
				if gridAcc[i] > gridAcc[best] {
					best = i
				}
			}
			ids := (t.Len() + c - 1) / c
			fmt.Printf("| %g | %d | %d | %.3g | %.4f | %.4f | %.3g | %.4f |\n", eps, c, ids, ruleLambda, ruleAcc, rowsAcc, grid[best], gridAcc[best])
		}
	}
	return nil
}
