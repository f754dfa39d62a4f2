package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/paper"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/datasets/synthetic"
)

// dataSet is one data set of the tables: a CSV file the train command
// reads (empty for the embedded data), its label column, its declared
// classes, the flags it needs beside the budget, and how it was made.
type dataSet struct {
	name    string
	file    string
	label   string
	classes []string
	flags   []string
	// rows is the number of data rows of the file (0 when not counted).
	rows int
	// made says how the CSV was prepared (for the results file).
	made string
}

// args returns the train flags of the data set (without the budget).
func (ds dataSet) args() []string {
	// The benchmark's protocol holds out a fifth of the rows for the
	// score (train's default holds out none).
	a := []string{"--test-frac", "0.2"}
	if ds.file != "" {
		a = append(a, "--data", ds.file, "--label", ds.label, "--classes", joinComma(ds.classes))
	}
	return append(a, ds.flags...)
}

func joinComma(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ","
		}
		out += v
	}
	return out
}

// Protocol constants of the prepared CSVs (the paper's protocol, on all
// rows at once: the features are public inputs of train here, and the
// fitted SVD and standardization are outside every claim).
const (
	components    = 32
	svdOversample = 10
	svdPowerIters = 4
	syntheticN    = 10000
	syntheticD    = 20
	syntheticSeed = 7
)

// prepare writes the CSV files of the data sets named in names into dir
// (from the shared data directory dataDir) and returns them. A data set
// whose source is missing is skipped with a message.
func prepare(names []string, dataDir, dir string) ([]dataSet, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []dataSet
	for _, name := range names {
		ds, err := prepareOne(name, dataDir, dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				logf("%s: skipped: %v", name, err)
				continue
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, ds)
	}
	return out, nil
}

func prepareOne(name, dataDir, dir string) (dataSet, error) {
	path := filepath.Join(dir, name+".csv")
	switch name {
	case "breast_cancer":
		return dataSet{name: name, made: "the embedded data (train without --data): 497 rows (the other 72 of the 569 give its public bounds), 30 features"}, nil
	case "adult":
		ds, err := paper.LoadAdult(filepath.Join(dataDir, "adult"), paper.AdultOptions{})
		if err != nil {
			return dataSet{}, err
		}
		if ds, err = reduceStandardize(ds, components); err != nil {
			return dataSet{}, err
		}
		return writeSet(ds, name, path, "income", "the paper's protocol on all 45,222 rows: one-hot, truncated SVD to 32, standardization, rows clipped to norm 1 (fitted on all rows, outside the claim)")
	case "adult_raw":
		return prepareAdultRaw(filepath.Join(dataDir, "adult"), dir)
	case "synthetic_wide":
		return prepareWide(path)
	case "adult_raw_small":
		ds, err := prepareAdultRaw(filepath.Join(dataDir, "adult"), dir)
		if err != nil {
			return dataSet{}, err
		}
		if ds, err = prepareHead(ds, name, path, adultSmall); err != nil {
			return dataSet{}, err
		}
		// 240 training rows cannot pay for a private estimate of the
		// numeric ranges: declare the attributes' domains instead.
		bounds := filepath.Join(dir, "adult_raw_small.bounds.csv")
		if err := os.WriteFile(bounds, []byte(adultDomains), 0o644); err != nil {
			return dataSet{}, err
		}
		ds.flags = append(ds.flags, "--bounds", bounds)
		ds.made += "; the numeric columns' domains declared (--bounds: age and hours per week 0 to 100, fnlwgt 0 to 1.5e6, education-num 1 to 16, capital gain 0 to 1e5, capital loss 0 to 5000)"
		return ds, nil
	case "lastfm":
		ds, err := paper.LoadLastFM(filepath.Join(dataDir, "lastfm_asia"), paper.LastFMOptions{})
		if err != nil {
			return dataSet{}, err
		}
		if ds, err = reduceStandardize(ds, 0); err != nil {
			return dataSet{}, err
		}
		return writeSet(ds, name, path, "country", "graph features reduced to 32 by its loader's SVD, standardized, rows clipped to norm 1 (fitted on all nodes, outside the claim); 18 classes")
	case "gene_all":
		ds, err := paper.LoadTCGA(filepath.Join(dataDir, "gene_all"), paper.TCGAOptions{})
		if err != nil {
			return dataSet{}, err
		}
		set, err := writeSet(ds, name, path, "Class", "all 12,625 probes as they are (log2 expression), with one public range for every probe, --bounds-all 0,16 (the log2 of a 16-bit scanner's intensities; the data set needs declared bounds: 102 rows cannot pay for a private estimate of 12,625 ranges)")
		set.flags = []string{"--bounds-all", "0,16"}
		return set, err
	case "digits":
		return prepareDigits(digitsFile, path)
	case "synthetic":
		ds, _, err := synthetic.Logistic(syntheticN, syntheticD, syntheticSeed, synthetic.LogisticOptions{})
		if err != nil {
			return dataSet{}, err
		}
		return writeSet(ds, name, path, "y", fmt.Sprintf("planted logistic model (synthetic.Logistic, n = %d, d = %d, seed %d), rows uniform in the unit ball", syntheticN, syntheticD, syntheticSeed))
	}
	if t, ok := sklearnTables[name]; ok {
		return prepareSklearn(name, t, path)
	}
	if t, ok := rTables[name]; ok {
		return prepareR(name, t, path)
	}
	return dataSet{}, fmt.Errorf("unknown data set %q", name)
}

// reduceStandardize projects ds on its top k right singular vectors (k = 0:
// no projection), standardizes the columns and clips every row to norm 1.
func reduceStandardize(ds *datasets.Dataset, k int) (*datasets.Dataset, error) {
	var err error
	if k > 0 {
		if ds, _, err = preprocess.ReduceSVD(ds, nil, k, svdOversample, svdPowerIters, 1); err != nil {
			return nil, err
		}
	}
	std, err := preprocess.FitStandardizer(ds.X)
	if err != nil {
		return nil, err
	}
	if ds, err = std.Transform(ds); err != nil {
		return nil, err
	}
	n, d := ds.X.Dims()
	for i := range n {
		row := ds.X.RawRowView(i)[:d]
		if nrm := mat.Norm(mat.NewVecDense(d, row), 2); nrm > 1 {
			for j := range row {
				row[j] /= nrm
			}
		}
	}
	return ds, nil
}

// writeCSV creates the file at path and writes it with write through a
// csv.Writer, closing it on every path.
func writeCSV(path string, write func(w *csv.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := write(w); err != nil {
		f.Close()
		return err
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeSet writes ds as a CSV file with the label column last, its labels
// written as class names.
func writeSet(ds *datasets.Dataset, name, path, label, made string) (dataSet, error) {
	err := writeCSV(path, func(w *csv.Writer) error {
		n, d := ds.X.Dims()
		header := append(append([]string(nil), ds.Features...), label)
		if len(ds.Features) != d {
			header = header[:0]
			for j := range d {
				header = append(header, fmt.Sprintf("x%d", j+1))
			}
			header = append(header, label)
		}
		if err := w.Write(header); err != nil {
			return err
		}
		rec := make([]string, d+1)
		for i := range n {
			for j := range d {
				rec[j] = strconv.FormatFloat(ds.X.At(i, j), 'g', 8, 64)
			}
			rec[d] = className(ds, ds.Y[i])
			if err := w.Write(rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return dataSet{}, err
	}
	return dataSet{name: name, file: path, label: label, classes: ds.Classes, flags: []string{"--standardize", "none"}, made: made}, nil
}

// className returns the class name of an encoded label.
func className(ds *datasets.Dataset, y float64) string {
	if len(ds.Classes) == 2 {
		if y > 0 {
			return ds.Classes[1]
		}
		return ds.Classes[0]
	}
	return ds.Classes[int(y)]
}
