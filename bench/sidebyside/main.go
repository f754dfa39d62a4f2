// Command sidebyside times stabpriv's native engine on the CSV that
// bench/sklearn_pass.py wrote, with the same objective and knobs, and prints
// one JSON line per engine setting. bench/compare.sh runs both sides.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

func main() {
	path := flag.String("csv", "", "CSV written by bench/sklearn_pass.py (label column \"label\")")
	passes := flag.Int("passes", 10, "passes per fit")
	lambda := flag.Float64("lambda", 1e-4, "elastic-net strength")
	repeats := flag.Int("repeats", 5, "fits timed; the best is reported")
	flag.Parse()
	if err := run(*path, *passes, *lambda, *repeats); err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(1)
	}
}

func run(path string, passes int, lambda float64, repeats int) error {
	ds, err := datasets.ReadCSVFile(path, datasets.CSVOptions{Label: "label", Positive: "1"})
	if err != nil {
		return err
	}
	n, d := ds.X.Dims()
	for _, b := range []int{1, 32} {
		// The marginal cost of a pass: fits of 1 and 1+passes passes,
		// differenced, as bench/sklearn_pass.py does.
		t1, _, err := fit(ds, b, 1, lambda, repeats)
		if err != nil {
			return err
		}
		tk, m, err := fit(ds, b, 1+passes, lambda, repeats)
		if err != nil {
			return err
		}
		out, err := json.Marshal(map[string]any{
			"impl": fmt.Sprintf("stabpriv native b=%d", b), "n": n, "d": d, "passes": passes,
			"seconds_per_pass": (tk - t1).Seconds() / float64(passes),
			"seconds_fit":      tk.Seconds(),
			"train_accuracy":   m.Accuracy(ds.X, ds.Y),
		})
		if err != nil {
			return err
		}
		fmt.Println(string(out))
	}
	return nil
}

// fit returns the best wall time of repeated fits with the given settings and
// the last model.
func fit(ds *datasets.Dataset, batch, passes int, lambda float64, repeats int) (time.Duration, *trainer.Model, error) {
	tr, err := trainer.New(trainer.Config{
		Loss:   losses.Logistic{},
		Reg:    regularizers.ElasticNet{Lambda: lambda, L1Ratio: 0.15},
		Eta:    0.5,
		Passes: passes,
		Batch:  batch,
		Seed:   1,
	})
	if err != nil {
		return 0, nil, err
	}
	best := time.Duration(1<<63 - 1)
	var m *trainer.Model
	for r := 0; r < repeats; r++ {
		start := time.Now()
		m, _, err = tr.Train(context.Background(), ds.X, ds.Y)
		if err != nil {
			return 0, nil, err
		}
		best = min(best, time.Since(start))
	}
	return best, m, nil
}
