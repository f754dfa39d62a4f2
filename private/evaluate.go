package private

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/trainer"
)

// evalRows are held-out rows for diagnostics; nil when none are held out.
type evalRows struct {
	X    *mat.Dense
	y    []float64
	null []bool
}

// test returns the held-out rows, mapped for the diagnostics (nil
// without them).
func (r *preparedRows) test() (*evalRows, error) {
	if r.testX == nil {
		return nil, nil
	}
	return &evalRows{r.testX, r.testY, r.testNull}, nil
}

// evaluate computes the metric of model on the held-out rows (the zero
// Metric when there are none).
func (e *evalRows) evaluate(model *trainer.Model, task losses.Task) modelfile.Metric {
	if e == nil {
		return modelfile.Metric{}
	}
	return evaluate(model, task, e.X, e.y, e.null)
}

// majority returns the accuracy of predicting the most frequent label of
// the rows that are not null: the baseline a classifier must beat (the
// zero Metric's Rows when there are none).
func majority(y []float64, null []bool) modelfile.Metric {
	count := map[float64]int{}
	rows, best := 0, 0
	for i, v := range y {
		if null[i] {
			continue
		}
		rows++
		count[v]++
		best = max(best, count[v])
	}
	if rows == 0 {
		return modelfile.Metric{Name: "none"}
	}
	return modelfile.Metric{Name: "accuracy", Value: float64(best) / float64(rows), Rows: rows}
}

func countTrue(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// evaluate computes the metric of model on the rows that are not null.
func evaluate(model *trainer.Model, task losses.Task, X *mat.Dense, y []float64, null []bool) modelfile.Metric {
	_, d := X.Dims()
	z := make([]float64, model.K)
	var hit, ss float64
	rows := 0
	for i := range y {
		if null[i] {
			continue
		}
		rows++
		x := X.RawRowView(i)[:d]
		if task == losses.Regression {
			model.Margins(z, x)
			r := z[0] - y[i]
			ss += r * r
			continue
		}
		if model.Predict(x) == y[i] {
			hit++
		}
	}
	if rows == 0 {
		return modelfile.Metric{Name: "none", Rows: 0}
	}
	if task == losses.Regression {
		return modelfile.Metric{Name: "rmse", Value: math.Sqrt(ss / float64(rows)), Rows: rows}
	}
	return modelfile.Metric{Name: "accuracy", Value: hit / float64(rows), Rows: rows}
}
