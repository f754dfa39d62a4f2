package datasets

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/losses"
)

func TestReadCategories(t *testing.T) {
	got, err := ReadCategories(strings.NewReader("# Adult\nsex, Female, Male\n\"race\",White,\"Asian-Pac-Islander\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Categorical{{Column: "sex", Values: []string{"Female", "Male"}}, {Column: "race", Values: []string{"White", "Asian-Pac-Islander"}}}
	if len(got) != 2 || got[0].Column != want[0].Column || !slices.Equal(got[0].Values, want[0].Values) || !slices.Equal(got[1].Values, want[1].Values) {
		t.Errorf("read %+v, want %+v", got, want)
	}
	for _, bad := range []string{
		"", "# only a comment\n", "sex\n", "sex,\n", "sex,a,a\n", "sex,a\nsex,b\n", ",a,b\n", "\"sex,a\n",
	} {
		if _, err := ReadCategories(strings.NewReader(bad)); !errors.Is(err, ErrSchema) {
			t.Errorf("%q: %v, want ErrSchema", bad, err)
		}
	}
}

// TestEncodeCategories checks that a declared categorical column becomes
// the index of each cell's category (by its exact text; -1 for any other
// text), that its cells need not be numbers, and that declaring a column the
// table does not have, the label, or a bounded column is refused.
func TestEncodeCategories(t *testing.T) {
	tab, err := NewTable("t", []string{"x", "color", "y"}, [][]string{
		{"1.5", "red", "a"}, {"2", "blue", "b"}, {"-3", "?", "a"}, {"0", "Red", "b"}, {"4", "1", "a"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := Schema{Label: "y", Classes: []string{"a", "b"}, Categories: []Categorical{{Column: "color", Values: []string{"red", "blue", "1"}}}}
	if err := s.Validate(losses.Binary); err != nil {
		t.Fatal(err)
	}
	enc, err := tab.Encode(s, losses.Binary)
	if err != nil {
		t.Fatal(err)
	}
	var col []float64
	for i := range enc.N {
		col = append(col, enc.Row(i)[1])
	}
	if !slices.Equal(col, []float64{0, 1, -1, -1, 2}) || enc.Categories[0] != nil || !slices.Equal(enc.Categories[1], []string{"red", "blue", "1"}) {
		t.Errorf("encoded color %v, categories %v", col, enc.Categories)
	}
	missing := s
	missing.Categories = []Categorical{{Column: "colour", Values: []string{"red"}}}
	if _, err := tab.Encode(missing, losses.Binary); !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), `"colour"`) {
		t.Errorf("a column the table lacks: %v", err)
	}
	label := s
	label.Categories = []Categorical{{Column: "y", Values: []string{"a"}}}
	bounded := s
	bounded.Bounds = []Bound{{Column: "color", Lo: 0, Hi: 1}}
	for name, bad := range map[string]Schema{"label": label, "bounded": bounded} {
		if err := bad.Validate(losses.Binary); !errors.Is(err, ErrSchema) {
			t.Errorf("%s declared categorical: %v", name, err)
		}
	}
	all := s
	all.All = &Bound{Lo: 0, Hi: 1}
	if _, ok := all.Bound("color"); ok {
		t.Error("--bounds-all bounds a categorical column")
	}
}
