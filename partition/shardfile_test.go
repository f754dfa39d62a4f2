package partition

import (
	"errors"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/modelfile"
)

// TestCheckShardHead: CSV heads pass (with a byte-order mark, quoted
// names, no rows); JSON, a model file and binary data are named.
func TestCheckShardHead(t *testing.T) {
	for _, c := range []struct {
		head, want string
	}{
		{"x1,x2,y\n1,2,a\n", ""},
		{"\ufeffx1,y\n", ""},
		{`"{a}",y` + "\n", ""},
		{"", ""},
		{"{\n  \"format\": \"" + modelfile.Format + "\",\n", "a stabpriv model file"},
		{` {"format":"` + modelfile.Format + `"}`, "a stabpriv model file"},
		{"\ufeff\n[1, 2]", "a JSON file"},
		{`{"a": 1}`, "a JSON file"},
		{"x,y\n\x00\x01", "a binary file"},
	} {
		err := CheckShardHead("s.csv", []byte(c.head))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v, want none", c.head, err)
		case c.want != "" && (!errors.Is(err, ErrNotShard) || !errors.Is(err, datasets.ErrFormat) || !strings.Contains(err.Error(), "s.csv looks like "+c.want)):
			t.Errorf("%q: %v, want ErrNotShard saying %q", c.head, err, c.want)
		}
	}
}
