package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// adultColumns are the names of the fields of UCI Adult's records, in file
// order (adult.names), the label last.
var adultColumns = []string{"age", "workclass", "fnlwgt", "education", "education-num",
	"marital-status", "occupation", "relationship", "race", "sex",
	"capital-gain", "capital-loss", "hours-per-week", "native-country", "income"}

// prepareAdultRaw writes Adult's records as they are (adult.data, then
// adult.test: 48,842 rows, missing values '?' kept) into one CSV file with
// a header, and a schema file declaring the eight categorical columns with
// the categories listed in adult.names (the data set's documentation:
// public, read before any row). Only the spaces after the commas and the
// '.' that ends adult.test's labels are removed. The numeric columns have
// no declared bounds: train estimates them privately.
func prepareAdultRaw(src, dir string) (dataSet, error) {
	schemaPath := filepath.Join(dir, "adult_raw.schema.csv")
	cats, err := adultCategories(filepath.Join(src, "adult.names"))
	if err != nil {
		return dataSet{}, err
	}
	if err := os.WriteFile(schemaPath, []byte(cats), 0o644); err != nil {
		return dataSet{}, err
	}
	path := filepath.Join(dir, "adult_raw.csv")
	err = writeCSV(path, func(w *csv.Writer) error {
		if err := w.Write(adultColumns); err != nil {
			return err
		}
		for _, name := range []string{"adult.data", "adult.test"} {
			if err := copyAdult(w, filepath.Join(src, name)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return dataSet{}, err
	}
	return dataSet{name: "adult_raw", file: path, label: "income", classes: []string{"<=50K", ">50K"},
		flags: []string{"--schema", schemaPath},
		made:  "UCI Adult's records as they are (adult.data then adult.test, 48,842 rows, '?' kept: it maps to zero), the eight categorical columns declared with adult.names' categories (--schema), the six numeric columns read by train's default bounds step (a centre and a spread each, estimated privately)"}, nil
}

// copyAdult appends the records of an Adult file to w, each field trimmed
// and the label's trailing '.' removed; lines that are not records (blank,
// adult.test's first line) are skipped.
func copyAdult(w *csv.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rec := strings.Split(sc.Text(), ",")
		if len(rec) != len(adultColumns) {
			continue
		}
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		rec[len(rec)-1] = strings.TrimSuffix(rec[len(rec)-1], ".")
		if err := w.Write(rec); err != nil {
			return err
		}
	}
	return sc.Err()
}

// adultCategories returns the schema file (column,category,... per line) of
// Adult's categorical columns from the attribute list of adult.names:
// lines "name: a, b, c." whose values are not "continuous".
func adultCategories(names string) (string, error) {
	data, err := os.ReadFile(names)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	found := 0
	for _, line := range strings.Split(string(data), "\n") {
		col, vals, ok := strings.Cut(line, ":")
		if !ok || !isAdultColumn(col) {
			continue
		}
		vals = strings.TrimSuffix(strings.TrimSpace(vals), ".")
		if vals == "continuous" {
			continue
		}
		parts := strings.Split(vals, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		fmt.Fprintf(&b, "%s,%s\n", col, strings.Join(parts, ","))
		found++
	}
	if found != 8 {
		return "", fmt.Errorf("%s: %d categorical attributes, want 8", names, found)
	}
	return b.String(), nil
}

func isAdultColumn(s string) bool {
	for _, c := range adultColumns[:len(adultColumns)-1] {
		if s == c {
			return true
		}
	}
	return false
}

// adultDomains are public domains of Adult's numeric attributes (their
// meaning, not their rows): a bounds file.
const adultDomains = `age,0,100
fnlwgt,0,1500000
education-num,1,16
capital-gain,0,100000
capital-loss,0,5000
hours-per-week,0,100
`
