package datasets

import (
	"bytes"
	"github.com/stabpriv/stabpriv/datasets/internal/rawcsv"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/internal/check"
)

// sameRead checks that ReadCSV gives on input what encoding/csv on every
// line gives (readCSV with allQuoted): the same data set or the same error.
func sameRead(t *testing.T, input string, opts CSVOptions) {
	t.Helper()
	got, gerr := ReadCSV(strings.NewReader(input), opts)
	want, werr := readCSV(strings.NewReader(input), opts, true)
	if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
		t.Fatalf("input %q:\\nerror %v\\nwant  %v", input, gerr, werr)
	}
	if gerr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("input %q:\\ngot  %+v\\nwant %+v", input, got, want)
	}
}

// TestReadCSVInPlace compares the in-place parsing of lines without quotes
// with encoding/csv on edge cases (line ends, empty and blank lines, white
// space, a byte order mark, bad cells, ragged rows, quotes from some line
// on) and on random inputs built from them.
func TestReadCSVInPlace(t *testing.T) {
	cases := []string{
		"",
		"\n\n",
		"a,label\n1,x\n2,y\n",
		"a,label\r\n1,x\r\n2,y",
		"a,label\r\n1,x\r\n2,y\r",
		"a,label\n1,x\n2,y\r\r",
		"\n\na,label\n\n1,x\n\r\n2,y\n\n",
		"\ufeffa , label\n 1 ,\tx \n2,  y\n",
		"a,label\n1,x\n   \n2,y\n",
		"a,label\n1,x\n\r\r\n2,y\n",
		"a,label\n1,x,3\n2,y\n",
		"a,label\n1\n",
		"a,label\nNaN,x\n2,y\n",
		"a,label\nInf,x\n2,y\n",
		"a,label\n1e400,x\n2,y\n",
		"a,label\nabc,x\n",
		"a,label\n1,\n2,y\n",
		"a,label\n1,x\n",
		"a,a\n1,x\n",
		",label\n1,x\n",
		"label\n1\n",
		"b,label\n1,x\n",
		"a,label\n1,x\n\"2\",y\n3,y\n",
		"a,label\n1,x\n2,\"y\nz\"\n3,x\n4,\"q\"q\n",
		"a,\"label\"\n1,x\n2,y\n",
		"a,label\n1,x\n2,y\"\n",
		"a,b,label\n1,2,x\n3,4,y\n5,6,x\n",
	}
	for _, c := range cases {
		for _, label := range []string{"label", "a"} {
			sameRead(t, c, CSVOptions{Label: label})
		}
		sameRead(t, c, CSVOptions{Label: "label", Positive: "y"})
	}
	parts := []string{"a", "label", ",", "\n", "\r\n", "\r", " ", "\t", "1", "-2.5", "1e3", "x", "y", "\"", "NaN", ""}
	r := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < 3000; it++ {
		var b strings.Builder
		b.WriteString("a,label\n")
		for k := r.IntN(30); k > 0; k-- {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		sameRead(t, b.String(), CSVOptions{Label: "label"})
		sameRead(t, b.String(), CSVOptions{Label: "label", Task: 2})
	}
}

// TestReadCSVLongLines covers lines longer than the read buffer.
func TestReadCSVLongLines(t *testing.T) {
	var b bytes.Buffer
	for j := 0; j < 9000; j++ {
		b.WriteString("c" + strconv.Itoa(j) + ",")
	}
	b.WriteString("label\n")
	for i := 0; i < 3; i++ {
		for j := 0; j < 9000; j++ {
			b.WriteString("0.123456789,")
		}
		b.WriteString([]string{"1\n", "-1\n"}[i%2])
	}
	sameRead(t, b.String(), CSVOptions{Label: "label"})
	ds, err := ReadCSV(&b, CSVOptions{Label: "label"})
	if err != nil {
		t.Fatal(err)
	}
	if n, d := ds.X.Dims(); n != 3 || d != 9000 {
		t.Errorf("%d x %d, want 3 x 9000", n, d)
	}
}

// FuzzReadCSVInPlace compares the in-place parsing with encoding/csv on
// arbitrary inputs.
func FuzzReadCSVInPlace(f *testing.F) {
	f.Add("a,label\n1,x\n2,y\n")
	f.Add("a,label\r\n1,x\r\n\"2\",y\r")
	f.Fuzz(func(t *testing.T, input string) {
		sameRead(t, input, CSVOptions{Label: "label"})
	})
}

// checkParse compares rawcsv.ParseFinite with check.ParseFinite bit for bit.
func checkParse(t *testing.T, s string) {
	t.Helper()
	got, gok := rawcsv.ParseFinite(s)
	want, wok := check.ParseFinite(s)
	if gok != wok || (gok && math.Float64bits(got) != math.Float64bits(want)) {
		t.Fatalf("rawcsv.ParseFinite(%q) = %v, %v; ParseFinite gives %v, %v", s, got, gok, want, wok)
	}
}

// TestParseFinite checks rawcsv.ParseFinite against check.ParseFinite on edge cases
// and on random decimals of 1 to 21 digits with exponents from -30 to 30,
// written as strconv writes them and in plain and exponent forms.
func TestParseFinite(t *testing.T) {
	for _, s := range []string{"", "+", "-", ".", "-.", "0", "-0", "+0", "00", "0.", ".0", "-0.0", "007", "1.50",
		"0.05", "1e5", "1E+05", "1e-5", "1e", "1e+", "1e0022", "1e22", "1e23", "1e-22", "1e-23", "5e-324", "1e308",
		"1e309", "-1e309", "inf", "Inf", "-Infinity", "NaN", "nan", "0x1p-2", "1_000", "1,5", "1.5.5", "--1",
		"9007199254740991", "9007199254740992", "9007199254740993", "4503599627370497", "12345678901234567890",
		"0.1000000000000000000000", "1234567890123456789e-22", "0.0000000000000000000000001", "1e-0", "3.", "-.5e1"} {
		checkParse(t, s)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for it := 0; it < 200000; it++ {
		digits := 1 + r.IntN(21)
		var b strings.Builder
		if r.IntN(3) == 0 {
			b.WriteByte("+-"[r.IntN(2)])
		}
		dot := r.IntN(digits + 2)
		for k := 0; k < digits; k++ {
			if k == dot {
				b.WriteByte('.')
			}
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		if r.IntN(2) == 0 {
			b.WriteString("e" + strconv.Itoa(r.IntN(61)-30))
		}
		checkParse(t, b.String())
		v := r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
		checkParse(t, strconv.FormatFloat(v, 'g', 1+r.IntN(17), 64))
		checkParse(t, strconv.FormatFloat(v, 'f', r.IntN(20), 64))
		checkParse(t, strconv.FormatFloat(v, 'e', r.IntN(18), 64))
	}
}

// FuzzParseFinite compares rawcsv.ParseFinite with check.ParseFinite on arbitrary
// strings.
func FuzzParseFinite(f *testing.F) {
	for _, s := range []string{"1.5", "-0.001e-3", "9007199254740993", "1e22"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkParse(t, s) })
}
