package preprocess

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
)

// TestRowMapCategories checks the one-hot map: the layout (numeric inputs,
// then each categorical column's indicators, in feature order, and the
// bias), a declared category's indicator, the zero block of any other value,
// and ||x'|| <= 1 on random and extreme rows in every mode.
func TestRowMapCategories(t *testing.T) {
	features := []string{"age", "color", "w", "size"}
	s := datasets.Schema{Label: "y", Bounds: []datasets.Bound{{Column: "age", Lo: 0, Hi: 100}, {Column: "w", Lo: -1, Hi: 1}},
		Categories: []datasets.Categorical{{Column: "color", Values: []string{"red", "green", "blue"}}, {Column: "size", Values: []string{"S", "L"}}}}
	train := mat.NewDense(3, 4, []float64{10, 0, 0.5, 1, 20, 2, -0.5, -1, 30, -1, 0, 0})
	for _, mode := range []Mode{Bounds, None, Standardize} {
		p, err := NewRowMap(mode, features, s, train)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Check(); err != nil {
			t.Fatal(err)
		}
		if p.Dim() != 2+3+2+1 || !slices.Equal(p.NumericFeatures(), []string{"age", "w"}) || !strings.Contains(p.Words, "one-hot") {
			t.Fatalf("%s: dim %d, numeric %v, words %q", mode, p.Dim(), p.NumericFeatures(), p.Words)
		}
		if mode == Standardize && len(p.Mean) != 2 {
			t.Errorf("standardizer of %d columns, want the 2 numeric ones", len(p.Mean))
		}
		dst := make([]float64, p.Dim())
		if err := p.Apply(dst, []float64{50, 2, 0, 0}); err != nil {
			t.Fatal(err)
		}
		// Inputs: age, [red green blue], w, [S L], bias.
		if dst[1] != 0 || dst[2] != 0 || dst[3] == 0 || dst[5] == 0 || dst[6] != 0 || dst[7] == 0 {
			t.Errorf("%s: blue and S give %v", mode, dst)
		}
		for _, x := range [][]float64{{50, -1, 0, 7}, {50, 0.5, 0, math.NaN()}, {50, 3, 0, 2}} {
			if err := p.Apply(dst, x); err != nil {
				t.Fatal(err)
			}
			if dst[1] != 0 || dst[2] != 0 || dst[3] != 0 || dst[5] != 0 || dst[6] != 0 {
				t.Errorf("%s: undeclared %v gives %v, want zero blocks", mode, x, dst)
			}
		}
		if i, ok := p.CategoryIndex(1, "green"); !ok || i != 1 {
			t.Errorf("CategoryIndex(color, green) = %v, %v", i, ok)
		}
		if i, ok := p.CategoryIndex(1, "Green"); !ok || i != -1 {
			t.Errorf("CategoryIndex(color, Green) = %v, %v", i, ok)
		}
		if _, ok := p.CategoryIndex(0, "1"); ok {
			t.Error("age is categorical")
		}
		r := rand.New(rand.NewPCG(1, 2))
		for range 1000 {
			x := []float64{r.NormFloat64() * 1e6, float64(r.IntN(5) - 1), r.NormFloat64() * 1e300, float64(r.IntN(3))}
			if err := p.Apply(dst, x); err != nil {
				t.Fatal(err)
			}
			var sq float64
			for _, v := range dst {
				sq += v * v
			}
			if sq > 1 {
				t.Fatalf("%s: ||x'||^2 = %v > 1 for %v", mode, sq, x)
			}
		}
		if err := p.Apply(dst, []float64{math.Inf(1), 0, 0, 0}); !errors.Is(err, datasets.ErrFormat) {
			t.Errorf("an infinite numeric value: %v", err)
		}
	}
	bad := datasets.Schema{Label: "y", Bounds: []datasets.Bound{{Column: "age", Lo: 0, Hi: 100}, {Column: "w", Lo: -1, Hi: 1}, {Column: "color", Lo: 0, Hi: 1}}, Categories: s.Categories}
	if _, err := NewRowMap(Bounds, features, bad, nil); !errors.Is(err, datasets.ErrSchema) {
		t.Errorf("a bound on a categorical column: %v", err)
	}
	p, _ := NewRowMap(None, features, s, nil)
	for name, alter := range map[string]func(p *RowMap){
		"empty category":  func(p *RowMap) { p.Categories[0].Values = []string{"red", ""} },
		"unknown column":  func(p *RowMap) { p.Categories[1].Column = "shape" },
		"repeated column": func(p *RowMap) { p.Categories[1].Column = "color" },
		"no categories":   func(p *RowMap) { p.Categories[1].Values = nil },
	} {
		q := *p
		q.Categories = []datasets.Categorical{{Column: "color", Values: slices.Clone(s.Categories[0].Values)}, {Column: "size", Values: slices.Clone(s.Categories[1].Values)}}
		alter(&q)
		if err := q.Check(); err == nil {
			t.Errorf("%s: Check accepts %+v", name, q.Categories)
		}
	}
}
