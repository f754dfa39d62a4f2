package datasets_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/losses"
)

// TestParseError checks that every positional error of the data CSV
// reader, the bounds reader and the schema reader carries a *ParseError
// with the line, the data row, the column and its name, under the error
// kind of its reader.
func TestParseError(t *testing.T) {
	readTable := func(in string) error { _, err := datasets.ReadTable(strings.NewReader(in), "d.csv"); return err }
	readCSV := func(task losses.Task) func(string) error {
		return func(in string) error {
			_, err := datasets.ReadCSV(strings.NewReader(in), datasets.CSVOptions{Label: "y", Task: task})
			return err
		}
	}
	encode := func(in string) error {
		tab, err := datasets.ReadTable(strings.NewReader(in), "d.csv")
		if err != nil {
			return err
		}
		_, err = tab.Encode(datasets.Schema{Label: "y", Classes: []string{"p", "q"}}, losses.Binary)
		return err
	}
	bounds := func(in string) error { _, err := datasets.ReadBounds(strings.NewReader(in)); return err }
	categories := func(in string) error { _, err := datasets.ReadCategories(strings.NewReader(in)); return err }
	newTable := func(string) error {
		_, err := datasets.NewTable("t", []string{"a", "y"}, [][]string{{"1", "p"}, {"2"}})
		return err
	}
	for _, c := range []struct {
		name string
		read func(string) error
		in   string
		kind error
		want datasets.ParseError // Err unchecked
		msg  string              // the end of the message
	}{
		{"ragged row", readTable, "a,y\n1,p\n\n2,q,3\n", datasets.ErrFormat, datasets.ParseError{Line: 4}, "line 4: 3 fields, the header has 2"},
		{"ragged row of NewTable", newTable, "", datasets.ErrFormat, datasets.ParseError{Line: 3, Row: 2}, "line 3, data row 2: 1 fields, the header has 2"},
		{"CSV syntax", readTable, "a,y\n1,p\n2,q\"\n", datasets.ErrFormat, datasets.ParseError{Line: 3}, `line 3: byte 4: bare " in non-quoted-field`},
		{"header without a name", readTable, "a,,y\n1,2,p\n", datasets.ErrFormat, datasets.ParseError{Line: 1, Column: 2}, "line 1, column 2: no name in the header"},
		{"header twice a name", readTable, "\na,b,a\n1,2,3\n", datasets.ErrFormat, datasets.ParseError{Line: 2, Column: 3}, `line 2, column 3: columns 1 and 3 are both named "a"`},
		{"feature cell", readCSV(losses.Binary), "a,b,y\n1,2,p\n3,oops,q\n", datasets.ErrFormat, datasets.ParseError{Line: 3, Column: 2, Name: "b"}, `line 3, column "b": "oops" is not a finite number`},
		{"empty label", readCSV(losses.Binary), "a,y\n1,p\n2,\n", datasets.ErrFormat, datasets.ParseError{Line: 3, Column: 2, Name: "y"}, `line 3, column "y": empty label`},
		{"regression label", readCSV(losses.Regression), "y,a\n1,2\nx,2\n", datasets.ErrFormat, datasets.ParseError{Line: 3, Column: 1, Name: "y"}, `line 3, column "y": label "x" is not a finite number`},
		{"encoded cell", encode, "y,a,b\np,1,2\n\nq,3,x\n", datasets.ErrFormat, datasets.ParseError{Line: 4, Row: 2, Column: 3, Name: "b"}, `line 4, data row 2, column "b": "x" is not a finite number (a missing cell is empty, NA,`},
		{"bounds fields", bounds, "column,lo,hi\na,0,1\nb,0\n", datasets.ErrSchema, datasets.ParseError{Line: 3}, "bounds: line 3: 2 fields, want column,lo,hi"},
		{"bounds hi", bounds, "a,0,1\nb,0,x\n", datasets.ErrSchema, datasets.ParseError{Line: 2, Column: 3, Name: "hi"}, `bounds: line 2, column "hi": "x" is not a number`},
		{"bounds range", bounds, "a,0,1\n# c\nb,1,0\n", datasets.ErrSchema, datasets.ParseError{Line: 3, Column: 2}, `bounds: line 3, column 2: column "b" bounds [1, 0]: want lo < hi`},
		{"bounds twice", bounds, "a,0,1\nb,0,1\na,0,2\n", datasets.ErrSchema, datasets.ParseError{Line: 3, Column: 1}, `line 3, column 1: column "a" already bounded on line 1`},
		{"bounds name", bounds, "a\x01,0,1\n", datasets.ErrSchema, datasets.ParseError{Line: 1, Column: 1}, "line 1, column 1: bounded column \"a\\x01\" holds the control character U+0001 at byte 2"},
		{"categories none", categories, "a,x\nb\n", datasets.ErrSchema, datasets.ParseError{Line: 2, Column: 2}, `categories: line 2, column 2: "b" has no category`},
		{"categories twice", categories, "a,x\na,y\n", datasets.ErrSchema, datasets.ParseError{Line: 2, Column: 1}, `line 2, column 1: column "a" already declared on line 1`},
		{"category repeated", categories, "a,x,y,x\n", datasets.ErrSchema, datasets.ParseError{Line: 1, Column: 4}, `line 1, column 4: column "a": category "x" declared twice`},
	} {
		err := c.read(c.in)
		var pe *datasets.ParseError
		if !errors.As(err, &pe) || !errors.Is(err, c.kind) {
			t.Errorf("%s: %v: no *ParseError under %v", c.name, err, c.kind)
			continue
		}
		got := *pe
		got.Err = nil
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %q does not say %q", c.name, err, c.msg)
		}
	}
}
