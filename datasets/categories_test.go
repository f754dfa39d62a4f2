package datasets

import (
	"errors"
	"math"
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

// TestHashed checks the hashed columns: the bucket is the FNV-1a hash of
// the text (the published function: its test vectors), a missing cell has
// none, the declaration validates only with its canonical bucket names
// and a bucket count in range, and EncodeText reads a text cell of a
// numeric column as each TextCells says.
func TestHashed(t *testing.T) {
	// FNV-1a 64 of "" and "a": 0xcbf29ce484222325 and 0xaf63dc4c8601ec8c.
	if got, want := HashBucket("", 1<<12), int(uint64(0xcbf29ce484222325)%(1<<12)); got != want {
		t.Errorf("HashBucket(\"\") = %d, want %d", got, want)
	}
	if got, want := HashBucket("a", 1000), int(uint64(0xaf63dc4c8601ec8c)%1000); got != want {
		t.Errorf("HashBucket(\"a\") = %d, want %d", got, want)
	}
	c := Hashed("city", 8)
	if c.Index("NA") != -1 || c.Index("") != -1 || c.Index("Oslo") != HashBucket("Oslo", 8) || len(c.Values) != 8 || c.Values[7] != "#7" {
		t.Errorf("Hashed: %+v, Index(Oslo) = %d", c, c.Index("Oslo"))
	}
	if err := ValidateCategories([]Categorical{c}); err != nil {
		t.Error(err)
	}
	bad := []Categorical{Hashed("city", 1), Hashed("city", MaxHashBuckets+1), {Column: "city", Hash: 8, Values: []string{"#0"}}}
	edited := Hashed("city", 3)
	edited.Values[2] = "Oslo"
	for _, b := range append(bad, edited) {
		if err := ValidateCategories([]Categorical{b}); !errors.Is(err, ErrSchema) {
			t.Errorf("%+v: %v, want ErrSchema", b, err)
		}
	}
	tab, err := ReadTable(strings.NewReader("city,x,y\nOslo,1,a\nRome,oops,b\nLima,NA,a\n"), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	s := Schema{Label: "y", Classes: []string{"a", "b"}}
	if _, err := tab.Encode(s, losses.Binary); !errors.Is(err, ErrFormat) {
		t.Errorf("Encode with text cells: %v, want ErrFormat", err)
	}
	e, err := tab.EncodeText(s, losses.Binary, TextMark)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(e.X[0], 1) || e.X[1] != 1 || !math.IsInf(e.X[3], 1) || !math.IsNaN(e.X[5]) {
		t.Errorf("TextMark: %v", e.X)
	}
	s.Categories = []Categorical{Hashed("city", 8)}
	e, err = tab.EncodeText(s, losses.Binary, TextMissing)
	if err != nil {
		t.Fatal(err)
	}
	if e.X[0] != float64(HashBucket("Oslo", 8)) || e.X[2] != float64(HashBucket("Rome", 8)) || !math.IsNaN(e.X[3]) || !math.IsNaN(e.X[5]) {
		t.Errorf("TextMissing with a hashed column: %v", e.X)
	}
}
