package datasets

import (
	"math"
	"strings"
	"testing"
)

func FuzzReadLibSVM(f *testing.F) {
	f.Add("1 1:0.5 3:2\n0 2:-1 # c\n", 0, false)
	f.Add("+1 1:1\n-1 1:2\n", 2, false)
	f.Add("3 1:1\n2 2:1\n1 3:1\n", 0, false)
	f.Add("0.5 1:1\n", 0, true)
	f.Add("1 2:1 1:1\n", 0, false)
	f.Fuzz(func(t *testing.T, in string, dim int, regression bool) {
		ds, err := ReadLibSVM(strings.NewReader(in), LibSVMOptions{Dimension: dim, MaxDimension: 1 << 12, Regression: regression})
		if err != nil {
			return
		}
		n, d := ds.X.Dims()
		if len(ds.Y) != n || len(ds.Features) != d || (dim > 0 && d != dim) {
			t.Fatalf("inconsistent shapes: X %d x %d, %d labels, %d names", n, d, len(ds.Y), len(ds.Features))
		}
		checkFuzzLabels(t, ds)
	})
}

// checkFuzzLabels checks the label encoding and that X is finite.
func checkFuzzLabels(t *testing.T, ds *Dataset) {
	t.Helper()
	n, _ := ds.X.Dims()
	for i := range n {
		for _, v := range ds.X.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("non-finite feature %v", v)
			}
		}
	}
	if ds.Classes == nil {
		return
	}
	k := len(ds.Classes)
	for _, y := range ds.Y {
		ok := y == float64(int(y)) && y >= 0 && int(y) < k
		if k == 2 {
			ok = y == -1 || y == 1
		}
		if !ok {
			t.Fatalf("label %v invalid with %d classes", y, k)
		}
	}
}
