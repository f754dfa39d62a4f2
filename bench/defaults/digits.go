package main

import (
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
)

// digitsFile is scikit-learn's copy of the UCI optical recognition of
// handwritten digits test set (1,797 images of 8 x 8 pixels, each pixel a
// count from 0 to 16, ten classes), as Debian's python3-sklearn installs
// it: one image a line, the 64 pixels then the digit, no header.
const digitsFile = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"

// digitsPixels is the number of pixels of an image; digitsMax is the
// largest pixel value (the count of set bits in a 4 x 4 block: a public
// bound, the data set's documentation, not its rows).
const (
	digitsPixels = 64
	digitsMax    = 16
)

// copyRecords writes a CSV file at path: the header, then every record
// of r (read from the file src) that fix, given the record and its number
// from 1, accepts, as fix leaves it. It returns the number of records.
func copyRecords(path, src string, r *csv.Reader, header []string, fix func(rec []string, row int) error) (int, error) {
	rows := 0
	err := writeCSV(path, func(w *csv.Writer) error {
		if err := w.Write(header); err != nil {
			return err
		}
		for {
			rec, err := r.Read()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: %w", src, err)
			}
			if err := fix(rec, rows+1); err != nil {
				return err
			}
			if err := w.Write(rec); err != nil {
				return err
			}
			rows++
		}
	})
	return rows, err
}

// prepareDigits writes the digits data set from the gzipped file src as a
// CSV file with a header (pixels p1..p64, the label digit) at path, rows in
// the source's order. Its pixels are read with their public range
// (--bounds-all 0,16) and the model is a softmax over the ten digits. A
// missing src is an os.IsNotExist error: prepare skips the data set.
func prepareDigits(src, path string) (dataSet, error) {
	f, err := os.Open(src)
	if err != nil {
		return dataSet{}, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return dataSet{}, fmt.Errorf("%s: %w", src, err)
	}
	r := csv.NewReader(gz)
	r.FieldsPerRecord = digitsPixels + 1
	header := make([]string, 0, digitsPixels+1)
	for j := range digitsPixels {
		header = append(header, fmt.Sprintf("p%d", j+1))
	}
	rows, err := copyRecords(path, src, r, append(header, "digit"), func(rec []string, row int) error {
		for _, v := range rec {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				return fmt.Errorf("%s, line %d: %w", src, row, err)
			}
		}
		return nil
	})
	if err != nil {
		return dataSet{}, err
	}
	classes := make([]string, 10)
	for c := range classes {
		classes[c] = strconv.Itoa(c)
	}
	return dataSet{name: "digits", file: path, label: "digit", classes: classes,
		flags: []string{"--bounds-all", fmt.Sprintf("0,%d", digitsMax)},
		made:  fmt.Sprintf("scikit-learn's digits (%s: %d images of 8 x 8 pixels, ten classes), rows in the file's order, the pixels' public range declared (--bounds-all 0,%d: a pixel counts the set bits of a 4 x 4 block)", digitsFile, rows, digitsMax)}, nil
}
