package fetch

import (
	"errors"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets/internal/dataerr"
)

// TestSentinelsWrapDatasetsErrors checks that the sentinels of this package
// wrap the error kinds of package datasets (dataerr's, which datasets
// exports as ErrFormat and ErrInvalid) and carry its prefix. The check is
// here rather than among datasets' own, so that datasets' tests, and their
// fuzz build, link no HTTP client.
func TestSentinelsWrapDatasetsErrors(t *testing.T) {
	for _, tc := range []struct{ err, wrap error }{
		{ErrUnsafePath, dataerr.ErrFormat},
		{ErrChecksum, dataerr.ErrFormat},
		{ErrConfig, dataerr.ErrInvalid},
		{ErrNoChecksum, dataerr.ErrInvalid},
	} {
		if !errors.Is(tc.err, tc.wrap) || !strings.HasPrefix(tc.err.Error(), "datasets: ") {
			t.Errorf("%q does not wrap %q", tc.err, tc.wrap)
		}
	}
}
