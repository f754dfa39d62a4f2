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
		{"{\n  \"format\": \"" + modelfile.Format + "\",\n", "a JSON file"},
		{` {"format":"` + modelfile.Format + `"}`, "a JSON file"},
		{"\ufeff\n[\n1, 2]", "a JSON file"},
		{`["a", 1]`, "a JSON file"},
		{"\x1f\x8b\x08\x00\x0a\x0a\x0a\x0a\x02\xff", "a binary file"},
		{`{"a": 1}`, "a JSON file"},
		{"x\x00,y\n1,a\n", "a binary file"},
		{"\x1f\x8b\x08\x00", "a binary file"},
		// A CSV header whose first name opens a bracket, and a NUL or a
		// bracket in a data row (rows are not read: neighbours differ in
		// them).
		{"[a],b,y\n1,2,a\n", ""},
		{"[[a]],b,y\n", ""},
		{"[{a}],b,y\n", ""},
		// A line of spaces is the header to the reader (a nameless
		// column): the check does not look past it at a data row.
		{"   \n{\"a\":1}\n", ""},
		{"{a},b,y\n", ""},
		{"[1, 2]\n", ""},
		{"x,y\n\x00\x01", ""},
		{"x,y\n{\"a\":1}\n", ""},
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
