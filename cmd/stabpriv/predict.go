package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/modelfile"
)

// runPredict is the predict command: it applies a model file to the rows
// of a CSV file.
func runPredict(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("predict", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var model, data, out string
	fs.StringVar(&model, "model", "", "model `file` written by train --out")
	fs.StringVar(&data, "data", "", "CSV `file` with a header naming the model's feature columns (other columns are ignored)")
	fs.StringVar(&out, "out", "", "write the predictions as CSV to this `file` (default: standard output)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, "Usage: stabpriv predict --model model.json --data rows.csv [--out predictions.csv]\n\n"+
				"Applies the model's bundled preprocessing and weights to every row and writes\n"+
				"one line per row: row (the 0-based index of the data row, as in errors), prediction and, for the logistic and\n"+
				"softmax losses, the probability of each class. When the file has the model's\n"+
				"label column, the accuracy (or RMSE) is printed on standard error.\n\nFlags:\n")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return nil
		}
		return usagef("%w (run 'stabpriv help predict')", err)
	}
	if model == "" || data == "" || fs.NArg() > 0 {
		return usagef("predict needs --model FILE and --data FILE.csv")
	}
	r, err := modelfile.ReadFile(model)
	if err != nil {
		return err
	}
	t, err := datasets.ReadTableFile(data)
	if err != nil {
		return err
	}
	cols := make([]int, len(r.Features()))
	for j, f := range r.Features() {
		if cols[j] = slices.Index(t.Columns, f); cols[j] < 0 {
			return fmt.Errorf("%s: no column %q, a feature of the model (features: %v)", data, f, r.Features())
		}
	}
	label := slices.Index(t.Columns, r.Schema.Label)

	w := stdout
	var f *os.File
	if out != "" {
		if f, err = os.Create(out); err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	cw := csv.NewWriter(w)
	header := []string{"row", "prediction"}
	_, probaErr := r.PredictProba(make([]float64, len(cols)))
	if probaErr == nil {
		for _, c := range r.Schema.Classes {
			header = append(header, "p_"+c)
		}
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	x := make([]float64, len(cols))
	var hit, ss float64
	scored := 0
	for i := range t.Len() {
		for j, c := range cols {
			v, ok := t.Value(i, c)
			if !ok {
				// NaN and infinite cells are read as numbers.
				var err error
				if v, err = strconv.ParseFloat(t.Cell(i, c), 64); err != nil {
					return fmt.Errorf("%s: row %d (line %d), column %q: %q is not a number", data, i, t.Line(i), t.Columns[c], t.Cell(i, c))
				}
			}
			x[j] = v
		}
		pred, err := r.Predict(x)
		if err != nil {
			return fmt.Errorf("%s: row %d: %w", data, i, err)
		}
		rec := []string{strconv.Itoa(i), pred}
		if probaErr == nil {
			p, _ := r.PredictProba(x)
			for _, v := range p {
				rec = append(rec, strconv.FormatFloat(v, 'g', 6, 64))
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
		if label < 0 {
			continue
		}
		if r.Schema.Classes == nil {
			if y, err := strconv.ParseFloat(t.Cell(i, label), 64); err == nil {
				v, _ := strconv.ParseFloat(pred, 64)
				ss += (v - y) * (v - y)
				scored++
			}
		} else if y := t.Cell(i, label); slices.Contains(r.Schema.Classes, y) {
			scored++
			if y == pred {
				hit++
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	if scored > 0 {
		if r.Schema.Classes == nil {
			fmt.Fprintf(stderr, "rmse on the %d rows with a numeric label: %.4f\n", scored, math.Sqrt(ss/float64(scored)))
		} else {
			fmt.Fprintf(stderr, "accuracy on the %d rows with a declared class: %.4f\n", scored, hit/float64(scored))
		}
	}
	return nil
}
