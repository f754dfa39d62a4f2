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
func benchCSV(n, d int) []byte {
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
			b.WriteString("-1\n")
		} else {
			b.WriteString("1\n")
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
