// Package datatest holds checks shared by the tests of the datasets
// packages. It is for tests only.
package datatest

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/check"
)

// CheckEncoding fails the test unless every feature of X is finite and
// every label of y is encoded for the classes: -1 or +1 for two classes,
// an index 0..K-1 for more. classes nil (regression) checks X only.
func CheckEncoding(t *testing.T, X *mat.Dense, y []float64, classes []string) {
	t.Helper()
	n, _ := X.Dims()
	for i := range n {
		row := X.RawRowView(i)
		if j := check.FirstNonFinite(row); j >= 0 {
			t.Fatalf("non-finite feature %v", row[j])
		}
	}
	if classes == nil {
		return
	}
	k := len(classes)
	for _, v := range y {
		ok := v == float64(int(v)) && v >= 0 && int(v) < k
		if k == 2 {
			ok = v == -1 || v == 1
		}
		if !ok {
			t.Fatalf("label %v invalid with %d classes", v, k)
		}
	}
}
