package datasets

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
)

// benchCSV returns a CSV of n rows of d numeric features (10 significant
// digits) and a label column of -1/1.
func benchCSV(n, d int) []byte { return benchLabels(n, d, "-1", "1") }

// benchLabels returns a CSV of n rows of d numeric features (10 significant
// digits) and a label column of the two classes.
func benchLabels(n, d int, neg, pos string) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	for j := 0; j < d; j++ {
		b.WriteString("x" + strconv.Itoa(j) + ",")
	}
	b.WriteString("label\n")
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			b.Write(strconv.AppendFloat(b.AvailableBuffer(), r.NormFloat64()/5, 'g', 10, 64))
			b.WriteByte(',')
		}
		if r.IntN(2) == 0 {
			b.WriteString(neg + "\n")
		} else {
			b.WriteString(pos + "\n")
		}
	}
	return b.Bytes()
}

// csv100kx20 is benchCSV(100_000, 19), made once.
var csv100kx20 = sync.OnceValue(func() []byte { return benchCSV(100_000, 19) })

// BenchmarkReadCSV100kx20 reads 100,000 rows of 19 features and a label.
func BenchmarkReadCSV100kx20(b *testing.B) {
	data := csv100kx20()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ReadCSV(bytes.NewReader(data), CSVOptions{Label: "label", Positive: "1"}); err != nil {
			b.Fatal(err)
		}
	}
}

// table100kx21 is benchLabels(100_000, 20, "neg", "pos"), made once: the
// shape of bench/compare.sh's csv measure, a text label.
var table100kx21 = sync.OnceValue(func() []byte { return benchLabels(100_000, 20, "neg", "pos") })

// BenchmarkReadTable100kx21 reads 100,000 rows of 20 numeric columns and a
// text label with ReadTable, the reader of stabpriv train.
func BenchmarkReadTable100kx21(b *testing.B) {
	data := table100kx21()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ReadTable(bytes.NewReader(data), "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
