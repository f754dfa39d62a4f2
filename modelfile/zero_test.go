package modelfile_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/stability"
)

// TestZeroReleased checks that applying a zero or nil Released returns an
// error wrapping ErrFile (and Features none) instead of panicking, and that
// PredictTable writes nothing then.
func TestZeroReleased(t *testing.T) {
	tab := &datasets.Table{Columns: []string{"x1", "x2", "y"}}
	for name, r := range map[string]*modelfile.Released{"zero": {}, "nil": nil} {
		if _, err := r.Predict([]float64{1}); !errors.Is(err, modelfile.ErrFile) {
			t.Errorf("%s: Predict: %v, want ErrFile", name, err)
		}
		if _, err := r.PredictProba([]float64{1}); !errors.Is(err, modelfile.ErrFile) {
			t.Errorf("%s: PredictProba: %v, want ErrFile", name, err)
		}
		if _, err := r.Margins(nil); !errors.Is(err, modelfile.ErrFile) {
			t.Errorf("%s: Margins: %v, want ErrFile", name, err)
		}
		if f := r.Features(); f != nil {
			t.Errorf("%s: Features %v, want none", name, f)
		}
		if notes, err := r.PipelineNotes(losses.Binary); !errors.Is(err, modelfile.ErrFile) || notes != nil {
			t.Errorf("%s: PipelineNotes: %v, %v; want ErrFile", name, notes, err)
		}
		for _, tb := range []*datasets.Table{nil, tab} {
			var out bytes.Buffer
			if _, err := r.PredictTable(tb, &out); !errors.Is(err, modelfile.ErrFile) || out.Len() != 0 {
				t.Errorf("%s: PredictTable: %v, wrote %q; want ErrFile and nothing written", name, err, out.String())
			}
		}
		if got := r.Neighbours(); got != modelfile.TableNeighbours {
			t.Errorf("%s: Neighbours %q", name, got)
		}
	}
	var out bytes.Buffer
	if _, err := goldenFit(t, perturb.Gamma).PredictTable(nil, &out); !errors.Is(err, datasets.ErrFormat) || out.Len() != 0 {
		t.Errorf("PredictTable of a nil table: %v, wrote %q; want datasets.ErrFormat and nothing written", err, out.String())
	}
}

// TestPartitionNotesZero checks that PartitionNotes refuses what does not
// describe a partitioned fit (nil parts, zero values, sizes that disagree
// with n) with an error wrapping ErrFile.
func TestPartitionNotesZero(t *testing.T) {
	info := &modelfile.PartitionInfo{Count: 2, Sizes: []int{3, 4}}
	for name, tc := range map[string]struct {
		part stability.Partitioned
		info *modelfile.PartitionInfo
	}{
		"zero":            {},
		"nil info":        {stability.Partitioned{N: 7}, nil},
		"zero info":       {stability.Partitioned{}, &modelfile.PartitionInfo{}},
		"sizes against n": {stability.Partitioned{N: 8}, info},
		"count":           {stability.Partitioned{N: 7}, &modelfile.PartitionInfo{Count: 3, Sizes: []int{3, 4}}},
	} {
		if notes, err := modelfile.PartitionNotes(tc.part, tc.info, 1); !errors.Is(err, modelfile.ErrFile) || notes != nil {
			t.Errorf("%s: %v, %v; want ErrFile", name, notes, err)
		}
	}
	notes, err := modelfile.PartitionNotes(stability.Partitioned{N: 7}, info, 1)
	if err != nil || len(notes) != 3 {
		t.Errorf("PartitionNotes: %v, %v", notes, err)
	}
}
