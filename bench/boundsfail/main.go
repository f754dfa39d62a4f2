// Command boundsfail measures the choice of privbounds.Failure, the
// probability per run that the noise lifts an empty bin of the private
// bounds' histogram above the threshold: on the numeric columns of a CSV,
// for each failure probability and seed, the same noise draws
// (privbounds.EstimateAt with perturb.Seeded(seed)) are thresholded at
// that probability, and the ranges are compared with the data's extent on
// the grid (the outer boundaries of its lowest and highest nonempty bins).
// It prints, per budget and failure probability: MinRows, the share of
// runs in which some range reached beyond the data's extent (an empty bin
// lifted by the noise), in which some range came out more than 16 times
// as wide as the extent (the absurd ranges),
// in which privbounds.Implausible warned, and the mean share of values
// outside the estimated ranges (clamped by the feature map). It is not
// part of `make test`; docs/RESULTS.md quotes it.
//
// Usage:
//
//	go run ./bench/boundsfail -data out/paper/defaults/data/adult_raw.csv -columns age,fnlwgt,education-num,capital-gain,capital-loss,hours-per-week [-eps 0.1,0.05] [-failures 0.05,0.001] [-seeds 1000]
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/privbounds"
)

func main() {
	data := flag.String("data", "", "CSV file")
	columns := flag.String("columns", "", "numeric columns (all but the last when empty)")
	epss := flag.String("eps", "0.1,0.05", "budgets of the estimate (eps_bounds)")
	failures := flag.String("failures", "0.05,0.001", "failure probabilities")
	seeds := flag.Int("seeds", 1000, "seeds of the noise")
	dir := flag.String("bounds-dir", "", "also write the bounds of seeds 1..-bounds-seeds at each budget and failure probability as bounds files (eps<e>-f<f>-s<seed>.csv) into this directory, for train --bounds")
	boundsSeeds := flag.Int("bounds-seeds", 5, "seeds of the bounds files")
	flag.BoolVar(&verbose, "verbose", false, "name every absurd range on stderr")
	flag.Parse()
	eps, err := runflags.Floats("eps", *epss)
	if err != nil {
		fmt.Fprintln(os.Stderr, "boundsfail:", err)
		os.Exit(2)
	}
	fails, err := runflags.Floats("failures", *failures)
	if err != nil {
		fmt.Fprintln(os.Stderr, "boundsfail:", err)
		os.Exit(2)
	}
	if err := run(*data, *columns, eps, fails, *seeds, *dir, *boundsSeeds); err != nil {
		fmt.Fprintln(os.Stderr, "boundsfail:", err)
		os.Exit(1)
	}
}

// verbose names every absurd range (-verbose).
var verbose bool

func run(path, columns string, epss, failures []float64, seeds int, dir string, boundsSeeds int) error {
	t, err := datasets.ReadTableFile(path)
	if err != nil {
		return err
	}
	names := t.Columns[:len(t.Columns)-1]
	if columns != "" {
		names = strings.Split(columns, ",")
	}
	n, d := t.Len(), len(names)
	X := mat.NewDense(n, d, nil)
	for k, name := range names {
		j := slices.Index(t.Columns, name)
		if j < 0 {
			return fmt.Errorf("no column %q", name)
		}
		for i := range n {
			v, ok := t.Value(i, j)
			if !ok {
				return fmt.Errorf("row %d, column %q: not a number", i, name)
			}
			X.Set(i, k, v)
		}
	}
	counts := make([][]float64, d)
	for j := range d {
		counts[j] = make([]float64, privbounds.Bins)
		for i := range n {
			counts[j][privbounds.Bin(X.At(i, j))]++
		}
	}
	// The data's extent on the grid: the outer boundaries of the lowest
	// and highest nonempty bins. A bound beyond it comes from an empty
	// bin that the noise lifted (the event Failure bounds).
	ref := make([][2]float64, d)
	for j := range d {
		first := slices.IndexFunc(counts[j], func(c float64) bool { return c > 0 })
		last := first
		for b, c := range counts[j] {
			if c > 0 {
				last = b
			}
		}
		ref[j] = [2]float64{privbounds.Lower(first), privbounds.Upper(last)}
	}
	fmt.Fprintf(os.Stderr, "%s: %d rows, %d columns, %d seeds\n", path, n, d, seeds)
	fmt.Println("| eps_bounds | failure | MinRows | some range beyond the data | some range > 16x the data's | Implausible warned | warned, given > 16x | values clamped |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, eps := range epss {
		for _, f := range failures {
			th := privbounds.ThresholdAt(d, eps, f)
			var widened, absurd, warned, warnedAbsurd int
			clamped := 0.0
			for s := 1; s <= seeds; s++ {
				lo, hi, err := privbounds.EstimateAt(X, eps, f, perturb.Seeded(uint64(s)))
				if err != nil {
					return err
				}
				w, a := false, false
				for j := range d {
					w = w || lo[j] < ref[j][0] || hi[j] > ref[j][1]
					if hi[j]-lo[j] > 16*(ref[j][1]-ref[j][0]) {
						a = true
						if verbose {
							fmt.Fprintf(os.Stderr, "eps %g, failure %g, seed %d: %s [%g, %g], the data's [%g, %g]; warned %v\n", eps, f, s, names[j], lo[j], hi[j], ref[j][0], ref[j][1], slices.Contains(privbounds.Implausible(lo, hi), j))
						}
					}
					out := 0
					for i := range n {
						if v := X.At(i, j); v < lo[j] || v > hi[j] {
							out++
						}
					}
					clamped += float64(out) / float64(n*d*seeds)
				}
				if dir != "" && s <= boundsSeeds {
					var b strings.Builder
					for j, name := range names {
						fmt.Fprintf(&b, "%s,%g,%g\n", name, lo[j], hi[j])
					}
					if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("eps%g-f%g-s%d.csv", eps, f, s)), []byte(b.String()), 0o644); err != nil {
						return err
					}
				}
				flagged := len(privbounds.Implausible(lo, hi)) > 0
				widened += b2i(w)
				absurd += b2i(a)
				warned += b2i(flagged)
				warnedAbsurd += b2i(flagged && a)
			}
			min := int(math.Ceil(privbounds.Spread * th))
			given := "-"
			if absurd > 0 {
				given = fmt.Sprintf("%d of %d", warnedAbsurd, absurd)
			}
			fmt.Printf("| %g | %g | %d | %.4f | %.4f | %.4f | %s | %.5f |\n", eps, f, min,
				float64(widened)/float64(seeds), float64(absurd)/float64(seeds), float64(warned)/float64(seeds), given, clamped)
		}
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
