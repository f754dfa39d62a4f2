package paper

import (
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/categorical"
	"github.com/stabpriv/stabpriv/internal/check"
)

// ErrTCGAFormat is returned (wrapped, with details) for malformed input in
// the TCGA layout, including a sample without a label and a duplicate sample
// id. It wraps datasets.ErrFormat.
var ErrTCGAFormat = fmt.Errorf("%w: TCGA layout", datasets.ErrFormat)

// Names of the files of the TCGA layout. LoadTCGA reads TCGADataFile, or
// TCGADataFile+".gz" when the plain file is absent.
const (
	TCGADataFile   = "data.csv"
	TCGALabelsFile = "labels.csv"
)

// DefaultTCGALabelColumn is the label column used when
// TCGAOptions.LabelColumn is empty.
const DefaultTCGALabelColumn = "Class"

// TCGAOptions configures LoadTCGA and ReadTCGA. The zero value reads the
// label column "Class" and makes the second sorted class +1 when there are
// two classes.
type TCGAOptions struct {
	// LabelColumn names the column of labels.csv holding the labels. Empty
	// means DefaultTCGALabelColumn.
	LabelColumn string
	// Positive names the +1 class of a binary task. Empty means the second
	// class in sorted order (for gene_all's B/T, T is +1). It must be empty
	// when there are more than two classes.
	Positive string
}

// LoadTCGA reads a data set in the layout of the UCI "gene expression cancer
// RNA-Seq" (TCGA PANCAN) files from dir: data.csv or data.csv.gz and
// labels.csv. See ReadTCGA for the format and the label encoding.
func LoadTCGA(dir string, opts TCGAOptions) (*datasets.Dataset, error) {
	lf, err := os.Open(filepath.Join(dir, TCGALabelsFile))
	if err != nil {
		return nil, fmt.Errorf("paper: TCGA: %w", err)
	}
	defer lf.Close()
	df, err := os.Open(filepath.Join(dir, TCGADataFile))
	var data io.Reader = df
	if errors.Is(err, os.ErrNotExist) {
		df, err = os.Open(filepath.Join(dir, TCGADataFile+".gz"))
		if err != nil {
			return nil, fmt.Errorf("paper: TCGA: %w", err)
		}
		gz, gerr := gzip.NewReader(df)
		if gerr != nil {
			df.Close()
			return nil, fmt.Errorf("%w: %s.gz: %w", ErrTCGAFormat, TCGADataFile, gerr)
		}
		defer gz.Close()
		data = gz
	} else if err != nil {
		return nil, fmt.Errorf("paper: TCGA: %w", err)
	}
	defer df.Close()
	// Both files under the caps of a data CSV (the decompressed bytes).
	return ReadTCGA(datasets.NewDataReader(data), datasets.NewDataReader(lf), opts)
}

// ReadTCGA reads the TCGA layout from two CSV streams. data has a header
// whose first cell (the sample id column, usually empty) is followed by one
// name per feature (gene), then one row per sample: the sample id and one
// finite number per feature. labels has a header naming its columns (the
// first is the sample id) and one row per sample. The rows of the result are
// the samples in data's order, joined with labels by sample id: a sample of
// data without a label, or a sample id repeated in either stream, is an
// error; labels of samples absent from data are ignored (a Note counts
// them). With two classes the labels are -1/+1 (Classes sorted, the second
// +1 unless Positive says otherwise); with more, class indices 0..K-1 in
// sorted class order.
func ReadTCGA(data, labels io.Reader, opts TCGAOptions) (*datasets.Dataset, error) {
	col := opts.LabelColumn
	if col == "" {
		col = DefaultTCGALabelColumn
	}
	byID, err := readTCGALabels(labels, col)
	if err != nil {
		return nil, err
	}
	ids, genes, values, err := readTCGAData(data)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		lab, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("%w: sample %q of %s has no label in %s", ErrTCGAFormat, id, TCGADataFile, TCGALabelsFile)
		}
		names[i] = lab
	}
	y, classes, err := categorical.EncodeClasses(names, opts.Positive)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTCGAFormat, err)
	}
	ds := &datasets.Dataset{
		X:        mat.NewDense(len(ids), len(genes), values),
		Y:        y,
		Features: genes,
		Classes:  classes,
	}
	counts := make(map[string]int)
	for _, n := range names {
		counts[n]++
	}
	parts := make([]string, len(classes))
	for k, c := range classes {
		parts[k] = fmt.Sprintf("%s=%d", c, counts[c])
	}
	ds.Notes = append(ds.Notes, fmt.Sprintf("tcga: %d samples x %d features, label column %q: %s",
		len(ids), len(genes), col, strings.Join(parts, " ")))
	if extra := len(byID) - len(ids); extra > 0 {
		ds.Notes = append(ds.Notes, fmt.Sprintf("tcga: %d labelled samples absent from the data were ignored", extra))
	}
	return ds, nil
}

// newTCGACSV returns a CSV reader for the TCGA layout.
func newTCGACSV(r io.Reader) *csv.Reader {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	return cr
}

// readTCGALabels returns the label of each sample id from the column named
// col.
func readTCGALabels(r io.Reader, col string) (map[string]string, error) {
	cr := newTCGACSV(r)
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: %s header: %w", ErrTCGAFormat, TCGALabelsFile, err)
	}
	at := -1
	for j, h := range header[1:] {
		if h == col {
			at = j + 1
			break
		}
	}
	if at < 0 {
		return nil, fmt.Errorf("%w: %s has no column %q (columns %q)", ErrTCGAFormat, TCGALabelsFile, col, header)
	}
	byID := make(map[string]string)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrTCGAFormat, TCGALabelsFile, err)
		}
		id, lab := rec[0], strings.TrimSpace(rec[at])
		if _, dup := byID[id]; dup {
			return nil, fmt.Errorf("%w: %s: duplicate sample id %q", ErrTCGAFormat, TCGALabelsFile, id)
		}
		if lab == "" {
			return nil, fmt.Errorf("%w: %s: sample %q has an empty label", ErrTCGAFormat, TCGALabelsFile, id)
		}
		byID[id] = lab
	}
	return byID, nil
}

// readTCGAData returns the sample ids, the feature names and the values
// (row-major, one row per sample).
func readTCGAData(r io.Reader) (ids, genes []string, values []float64, err error) {
	cr := newTCGACSV(r)
	header, err := cr.Read()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %s header: %w", ErrTCGAFormat, TCGADataFile, err)
	}
	genes = append([]string(nil), header[1:]...)
	if len(genes) == 0 {
		return nil, nil, nil, fmt.Errorf("%w: %s has no feature columns", ErrTCGAFormat, TCGADataFile)
	}
	seen := make(map[string]struct{})
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%w: %s: %w", ErrTCGAFormat, TCGADataFile, err)
		}
		id := rec[0]
		if _, dup := seen[id]; dup {
			return nil, nil, nil, fmt.Errorf("%w: %s: duplicate sample id %q", ErrTCGAFormat, TCGADataFile, id)
		}
		seen[id] = struct{}{}
		for j, s := range rec[1:] {
			v, ok := check.ParseFinite(strings.TrimSpace(s))
			if !ok {
				return nil, nil, nil, fmt.Errorf("%w: %s: sample %q, %s is %q, not a finite number",
					ErrTCGAFormat, TCGADataFile, id, genes[j], s)
			}
			values = append(values, v)
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, nil, nil, fmt.Errorf("%w: %s has no samples", ErrTCGAFormat, TCGADataFile)
	}
	return ids, genes, values, nil
}

// geneAll is the gene expression data set in the TCGA layout in the
// registry: the offline stand-in for the paper's TCGA PANCAN (Bioconductor
// ALL, 128 patients, B or T cell lineage), and TCGA PANCAN itself when the
// folder holds it. download.TCGA downloads TCGA PANCAN (801 x 20,531, five
// tumour types), the only one of the two with a canonical online source.
var geneAll = DataSet{
	Name:   "gene_all",
	Title:  "gene expression in the UCI TCGA layout (data.csv or data.csv.gz, labels.csv)",
	Dir:    "gene_all",
	Marker: TCGALabelsFile,
	Load:   func(dir string) (*datasets.Dataset, error) { return LoadTCGA(dir, TCGAOptions{}) },
	// About 100 training rows: 7 values half a decade apart from 1e-3 to 1.
	Lambdas: []float64{1e-3, 3.1623e-3, 1e-2, 3.1623e-2, 1e-1, 3.1623e-1, 1},
}
