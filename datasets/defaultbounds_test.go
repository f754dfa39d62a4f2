package datasets

import (
	"bytes"
	"math"
	"strconv"
	"testing"

	"github.com/stabpriv/stabpriv/losses"
)

// outward rounds v to three significant digits, down (up false) or up.
func outward(v float64, up bool) float64 {
	if v == 0 {
		return 0
	}
	q := math.Pow(10, math.Floor(math.Log10(math.Abs(v)))-2)
	x := v / q
	if up {
		x = math.Ceil(x - 1e-9)
	} else {
		x = math.Floor(x + 1e-9)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x*q, 'g', 3, 64), 64)
	return r
}

// TestDefaultBounds recomputes the shipped bounds from the reference
// sample (its mean plus and minus three standard deviations, rounded
// outward to three significant digits) and
// checks that the embedded table and the sample split the UCI file: no
// row of the sample is a row of the table.
func TestDefaultBounds(t *testing.T) {
	ref, err := DefaultReference()
	if err != nil {
		t.Fatal(err)
	}
	tab, schema, err := DefaultTable()
	if err != nil {
		t.Fatal(err)
	}
	all, err := ReadTable(bytes.NewReader(DefaultCSV()), "wdbc")
	if err != nil {
		t.Fatal(err)
	}
	if ref.Len() != 72 || tab.Len() != 497 || all.Len() != 569 {
		t.Fatalf("reference %d rows, table %d, file %d; want 72 + 497 = 569", ref.Len(), tab.Len(), all.Len())
	}
	for i := range all.Len() {
		part, k := tab, i-i/ReferenceStride-1
		if i%ReferenceStride == 0 {
			part, k = ref, i/ReferenceStride
		}
		for j := range all.Columns {
			if part.Cell(k, j) != all.Cell(i, j) {
				t.Fatalf("file row %d is not row %d of its part", i, k)
			}
		}
	}
	enc, err := ref.Encode(Schema{Label: DefaultLabel, Classes: schema.Classes}, losses.Binary)
	if err != nil {
		t.Fatal(err)
	}
	if len(schema.Bounds) != enc.D {
		t.Fatalf("%d bounds for %d features", len(schema.Bounds), enc.D)
	}
	for j, b := range schema.Bounds {
		var sum, sq float64
		for i := range enc.N {
			sum += enc.Row(i)[j]
		}
		mean := sum / float64(enc.N)
		for i := range enc.N {
			sq += (enc.Row(i)[j] - mean) * (enc.Row(i)[j] - mean)
		}
		sd := math.Sqrt(sq / float64(enc.N-1))
		wantLo, wantHi := outward(mean-3*sd, false), outward(mean+3*sd, true)
		if b.Column != enc.Features[j] || b.Lo != wantLo || b.Hi != wantHi {
			t.Errorf("%s: shipped [%v, %v], the reference sample gives %s [%v, %v]", b.Column, b.Lo, b.Hi, enc.Features[j], wantLo, wantHi)
		}
	}
}
