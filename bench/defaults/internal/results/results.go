// Package results reads the CSV files the benchmark's tasks write (one row
// per fit, a header naming the columns) and condenses a column over seeds
// into a mean and a standard deviation: what the tables of
// bench/defaults (table.md, targets.md) and the leave-one-out judgements
// (package loo) are computed from.
package results

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"strconv"
)

// Read reads a CSV file with a header into one map per row, the header's
// names as keys. A row of another length than the header (a line cut by an
// interrupted run) is left out.
func Read(path string) ([]map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		if len(rec) != len(recs[0]) {
			continue // a line cut by an interrupted run
		}
		m := map[string]string{}
		for j, h := range recs[0] {
			m[h] = rec[j]
		}
		out = append(out, m)
	}
	return out, nil
}

// Num returns the number in the column k of the row r, 0 when the cell is
// empty or not a number.
func Num(r map[string]string, k string) float64 {
	v, _ := strconv.ParseFloat(r[k], 64)
	return v
}

// Column returns the numbers of the column key of rows (Num).
func Column(rows []map[string]string, key string) []float64 {
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = Num(r, key)
	}
	return out
}

// Stat is a mean and a standard deviation over N seeds.
type Stat struct {
	Mean, SD float64
	N        int
}

// StatOf returns the mean and the sample standard deviation of xs (SD 0
// for one value; Mean NaN and N 0 for none).
func StatOf(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{Mean: math.NaN()}
	}
	var s, ss float64
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	sd := 0.0
	if len(xs) > 1 {
		sd = math.Sqrt(ss / float64(len(xs)-1))
	}
	return Stat{m, sd, len(xs)}
}

// String writes the mean ± the standard deviation to 4 decimals, "-" for
// no value.
func (s Stat) String() string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.4f ± %.4f", s.Mean, s.SD)
}

// Above reports whether the mean accuracy a is above b by more than the
// rounding of a mean: means of the same correct counts summed in another
// order differ in their last bits, and are a tie.
func Above(a, b float64) bool { return a-b > 1e-9 }
