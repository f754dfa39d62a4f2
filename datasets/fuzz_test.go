package datasets

import (
	"testing"

	"github.com/stabpriv/stabpriv/datasets/internal/datatest"
)

// checkFuzzLabels checks the label encoding and that X is finite.
func checkFuzzLabels(t *testing.T, ds *Dataset) {
	t.Helper()
	datatest.CheckEncoding(t, ds.X, ds.Y, ds.Classes)
}
