package main

import (
	"bufio"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// TestTrainOneCopy fails if train holds a second copy of the rows again:
// a private run on a numeric CSV of 40,000 rows and 20 columns (6.4 MB a
// float64 copy of its cells) allocates less than 2 copies in all, whether
// the cells are 10 significant digits of normals or 6 decimals of
// uniforms in [-1, 1] (short cells, a tenth of them ending in 0, which
// the reader kept as texts, 1.3 copies more, before it learned a column's
// decimals). The reader's table takes one copy and up to a quarter more
// of room reserved from the file's size (address space, never written),
// the fit's arrays of a few values a row about 0.4; every other copy of
// the rows (the encoded features, the raw training rows, the mapped rows,
// which train held before it mapped the table in place; the table without
// the columns of --ignore, which it copied) takes about one more.
func TestTrainOneCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on 40,000 rows")
	}
	const n, cols = 40000, 20
	dir := t.TempDir()
	formats := []struct {
		name string
		cell func(r *rand.Rand) string
	}{
		{"10 digits", func(r *rand.Rand) string { return strconv.FormatFloat(r.NormFloat64(), 'g', 10, 64) }},
		{"6 decimals", func(r *rand.Rand) string { return strconv.FormatFloat(2*r.Float64()-1, 'f', 6, 64) }},
	}
	one := float64(8 * n * cols)
	for _, format := range formats {
		data := filepath.Join(dir, "data.csv")
		writeRows(t, data, n, cols, format.cell)
		for _, extra := range [][]string{nil, {"--ignore", "x3"}} {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			args := append([]string{"train", "--data", data, "--label", "y", "--classes", "0,1", "--epsilon", "1", "--out", filepath.Join(dir, "m.json"), "--force"}, extra...)
			_, stderr, err := call(t, args...)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			copies := float64(after.TotalAlloc-before.TotalAlloc) / one
			t.Logf("train %v on cells of %s allocated %.2f copies of the rows", extra, format.name, copies)
			if copies > 2 {
				t.Errorf("train %v on cells of %s allocated %.2f float64 copies of the rows, want at most 2: a copy of the rows is back", extra, format.name, copies)
			}
		}
	}
}

// writeRows writes a CSV file at path of n rows: cols-1 features x0, x1,
// ... whose cells cell writes, and a label y of 0 or 1.
func writeRows(t *testing.T, path string, n, cols int, cell func(r *rand.Rand) string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	r := rand.New(rand.NewPCG(3, 3))
	for j := range cols - 1 {
		w.WriteString("x" + strconv.Itoa(j) + ",")
	}
	w.WriteString("y\n")
	for range n {
		for range cols - 1 {
			w.WriteString(cell(r) + ",")
		}
		w.WriteString(strconv.Itoa(r.IntN(2)) + "\n")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}
