package preprocess

import (
	"errors"
	"strconv"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
)

// TestNewRowMapWidth: a schema whose categories would make the mapped rows
// wider than MaxWidth is refused before any row is mapped; one at the
// limit is not.
func TestNewRowMapWidth(t *testing.T) {
	for _, c := range []struct {
		values int
		ok     bool
	}{{MaxWidth, true}, {MaxWidth + 1, false}} {
		vals := make([]string, c.values)
		for i := range vals {
			vals[i] = "v" + strconv.Itoa(i)
		}
		s := datasets.Schema{Label: "y", Categories: []datasets.Categorical{{Column: "a", Values: vals}}}
		_, err := NewRowMap(Bounds, []string{"a"}, s, nil)
		if c.ok != (err == nil) || !c.ok && !errors.Is(err, datasets.ErrSchema) {
			t.Errorf("%d categories: %v", c.values, err)
		}
	}
}
