// Paper runs a reduced version of the paper's Figure 1 experiment through
// the experiments package: 3 splits, 4 lambdas, 3 privacy levels, gamma-norm
// noise calibrated to the stability sensitivity of each SGD run. It uses
// UCI Adult when a data directory is given (-data-dir, or $STABPRIV_DATA),
// and the embedded breast-cancer data otherwise, and writes results.csv,
// summary.json, fig1.png and fig2.png into -out. The full sweeps are
// `stabpriv sweep` and `make paper`.
//
//	go run ./examples/paper -data-dir ../shared/datasets
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/experiments"
	"github.com/stabpriv/stabpriv/experiments/protocol"
)

func main() {
	dataDir := flag.String("data-dir", os.Getenv("STABPRIV_DATA"), "directory holding adult/ (empty: the embedded breast-cancer data)")
	out := flag.String("out", "out/example-paper", "output directory")
	flag.Parse()
	if err := run(context.Background(), *dataDir, *out, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, dataDir, out string, w io.Writer) error {
	proto := protocol.Config{Dataset: protocol.Adult, DataDir: dataDir}
	lambdas := []float64{1e-4, 3e-4, 1e-3, 3e-3}
	if dataDir == "" {
		// 569 rows, 30 features: no SVD (at most 32 features), and a
		// sensitivity 2/(mu n) 80 times Adult's, hence larger lambdas.
		ds, err := datasets.Default()
		if err != nil {
			return err
		}
		proto = protocol.Config{Dataset: "breast-cancer", Data: ds}
		lambdas = []float64{1e-3, 1e-2, 3e-2, 1e-1}
	}
	start := time.Now()
	rows, err := experiments.Sweep(ctx, experiments.SweepConfig{
		Protocol: proto,
		Splits:   3,
		Lambdas:  lambdas,
		Epsilons: []float64{0.5, 1, 5},
		Seed:     1,
	})
	if err != nil {
		return err
	}
	sum := experiments.Summarize(rows, append(proto.Notes(), experiments.ExperimentNotes...)...)
	sum.Seconds = time.Since(start).Seconds()
	if err := sum.WriteTable(w); err != nil {
		return err
	}
	paths, err := experiments.WriteSweep(out, rows, sum, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d releases in %.1f s; wrote %v\n", len(rows), sum.Seconds, paths)
	return nil
}
