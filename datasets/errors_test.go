package datasets_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/categorical"
	"github.com/stabpriv/stabpriv/datasets/libsvm"
	"github.com/stabpriv/stabpriv/datasets/paper"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/datasets/synthetic"
)

// TestSentinelsWrapPackageErrors checks that the sentinels of the datasets
// packages wrap datasets' error kinds; datasets/fetch checks its own.
func TestSentinelsWrapPackageErrors(t *testing.T) {
	tests := []struct {
		name      string
		err, wrap error
	}{
		{"Adult", paper.ErrAdultFormat, datasets.ErrFormat},
		{"LibSVM", libsvm.ErrFormat, datasets.ErrFormat},
		{"TCGA", paper.ErrTCGAFormat, datasets.ErrFormat},
		{"LastFM", paper.ErrLastFMFormat, datasets.ErrFormat},
		{"unknown category", categorical.ErrUnknownCategory, datasets.ErrFormat},
		{"SVD", preprocess.ErrSVD, datasets.ErrInvalid},
		{"synthetic", synthetic.ErrConfig, datasets.ErrInvalid},
	}
	for _, tc := range tests {
		if !errors.Is(tc.err, tc.wrap) || !strings.HasPrefix(tc.err.Error(), "datasets: ") {
			t.Errorf("%s: %q does not wrap %q", tc.name, tc.err, tc.wrap)
		}
	}
}
