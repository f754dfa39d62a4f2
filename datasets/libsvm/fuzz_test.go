package libsvm

import (
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets/internal/datatest"
)

func FuzzRead(f *testing.F) {
	f.Add("1 1:0.5 3:2\n0 2:-1 # c\n", 0, false)
	f.Add("+1 1:1\n-1 1:2\n", 2, false)
	f.Add("3 1:1\n2 2:1\n1 3:1\n", 0, false)
	f.Add("0.5 1:1\n", 0, true)
	f.Add("1 2:1 1:1\n", 0, false)
	f.Fuzz(func(t *testing.T, in string, dim int, regression bool) {
		ds, err := Read(strings.NewReader(in), Options{Dimension: dim, MaxDimension: 1 << 12, Regression: regression})
		if err != nil {
			return
		}
		n, d := ds.X.Dims()
		if len(ds.Y) != n || len(ds.Features) != d || (dim > 0 && d != dim) {
			t.Fatalf("inconsistent shapes: X %d x %d, %d labels, %d names", n, d, len(ds.Y), len(ds.Features))
		}
		datatest.CheckEncoding(t, ds.X, ds.Y, ds.Classes)
	})
}
