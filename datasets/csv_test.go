package datasets

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
)

func TestReadCSVErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
		opts CSVOptions
		want error  // sentinel
		msg  string // substring of the message
	}{
		{"empty file", "", CSVOptions{Label: "y"}, ErrFormat, "empty file"},
		{"no rows", "a,y\n", CSVOptions{Label: "y"}, ErrFormat, "no data rows"},
		{"ragged row", "a,y\n1,x\n2,y,3\n", CSVOptions{Label: "y"}, ErrFormat, "line 3: 3 fields, the header has 2"},
		{"non-numeric", "a,b,y\n1,2,p\n3,oops,q\n", CSVOptions{Label: "y"}, ErrFormat, `line 3, column "b": "oops" is not a finite number`},
		{"NaN feature", "a,y\n1,p\nNaN,q\n", CSVOptions{Label: "y"}, ErrFormat, `line 3, column "a"`},
		{"Inf feature", "a,y\n+Inf,p\n1,q\n", CSVOptions{Label: "y"}, ErrFormat, `line 2, column "a"`},
		{"empty feature", "a,y\n,p\n1,q\n", CSVOptions{Label: "y"}, ErrFormat, `line 2, column "a"`},
		{"missing label column", "a,b\n1,2\n", CSVOptions{Label: "y"}, ErrSchema, "the columns are a, b"},
		{"one class", "a,y\n1,p\n2,p\n", CSVOptions{Label: "y"}, ErrFormat, "single class"},
		{"one class multiclass", "a,y\n1,p\n2,p\n", CSVOptions{Label: "y", Task: losses.Multiclass}, ErrFormat, "single class"},
		{"three classes binary", "a,y\n1,p\n2,q\n3,r\n", CSVOptions{Label: "y"}, ErrFormat, "has 3 classes"},
		{"duplicate columns", "a,a,y\n1,2,p\n", CSVOptions{Label: "y"}, ErrFormat, `both named "a"`},
		{"empty column name", "a,,y\n1,2,p\n", CSVOptions{Label: "y"}, ErrFormat, "line 1, column 2: no name in the header"},
		{"only label", "y\np\nq\n", CSVOptions{Label: "y"}, ErrFormat, "no feature column"},
		{"empty label", "a,y\n1,p\n2,\n", CSVOptions{Label: "y"}, ErrFormat, `line 3, column "y": empty label`},
		{"bad regression label", "a,y\n1,2\n2,x\n", CSVOptions{Label: "y", Task: losses.Regression}, ErrFormat, `line 3, column "y": label "x"`},
		{"NaN regression label", "a,y\n1,2\n2,NaN\n", CSVOptions{Label: "y", Task: losses.Regression}, ErrFormat, "line 3"},
		{"unknown positive", "a,y\n1,p\n2,q\n", CSVOptions{Label: "y", Positive: "r"}, ErrFormat, `positive class "r"`},
		{"bad quote", "a,y\n1,\"p\n", CSVOptions{Label: "y"}, ErrFormat, ""},
		{"no label option", "a,y\n1,p\n", CSVOptions{}, ErrInvalid, "no label column"},
		{"unknown task", "a,y\n1,p\n", CSVOptions{Label: "y", Task: losses.Task(9)}, ErrInvalid, "unknown task"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds, err := ReadCSV(strings.NewReader(tt.data), tt.opts)
			if err == nil {
				t.Fatalf("ReadCSV = %+v, want an error", ds)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("error %q does not wrap %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
		})
	}
}

func TestReadCSVLabels(t *testing.T) {
	const data = "x1, x2 ,label\n1,2,b\n3,4,a\n5,6,c\n7,8,a\n"
	const binData = "x1,x2,label\n1,2,yes\n3,4,no\n5,6,yes\n"
	tests := []struct {
		name    string
		data    string
		opts    CSVOptions
		y       []float64
		classes []string
	}{
		{"binary sorted", binData, CSVOptions{Label: "label"}, []float64{1, -1, 1}, []string{"no", "yes"}},
		{"binary positive first", binData, CSVOptions{Label: "label", Positive: "no"}, []float64{-1, 1, -1}, []string{"yes", "no"}},
		{"binary positive second", binData, CSVOptions{Label: "label", Positive: "yes"}, []float64{1, -1, 1}, []string{"no", "yes"}},
		{"multiclass sorted", data, CSVOptions{Label: "label", Task: losses.Multiclass}, []float64{1, 0, 2, 0}, []string{"a", "b", "c"}},
		{"regression", "a,t\n1,2.5\n2,-1e3\n", CSVOptions{Label: "t", Task: losses.Regression}, []float64{2.5, -1000}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds, err := ReadCSV(strings.NewReader(tt.data), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ds.Y, tt.y) {
				t.Errorf("Y = %v, want %v", ds.Y, tt.y)
			}
			if !slices.Equal(ds.Classes, tt.classes) {
				t.Errorf("Classes = %q, want %q", ds.Classes, tt.classes)
			}
			if len(ds.Notes) == 0 {
				t.Error("no note on the label encoding")
			}
		})
	}
}

func TestReadCSVFeatures(t *testing.T) {
	// The label may sit in any column; names are trimmed, a BOM dropped.
	const data = "\ufeffa, label ,b\n1,p,2\n3,q,4\n"
	ds, err := ReadCSV(strings.NewReader(data), CSVOptions{Label: "label"})
	if err != nil {
		t.Fatal(err)
	}
	want := mat.NewDense(2, 2, []float64{1, 2, 3, 4})
	if !mat.Equal(ds.X, want) {
		t.Errorf("X = %v, want %v", mat.Formatted(ds.X), mat.Formatted(want))
	}
	if !slices.Equal(ds.Features, []string{"a", "b"}) {
		t.Errorf("Features = %q", ds.Features)
	}
}

func TestReadCSVFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.csv")
	if err := os.WriteFile(path, []byte("a,y\n1,p\n2,q\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := ReadCSVFile(path, CSVOptions{Label: "y"})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := ds.X.Dims(); n != 2 {
		t.Errorf("rows = %d, want 2", n)
	}
	if _, err := ReadCSVFile(filepath.Join(dir, "missing.csv"), CSVOptions{Label: "y"}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: error %v, want os.ErrNotExist", err)
	}
	if _, err := ReadCSVFile(path, CSVOptions{Label: "z"}); !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), path) {
		t.Errorf("bad label: error %v, want ErrSchema naming the file", err)
	}
}

func TestDefault(t *testing.T) {
	ds, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	n, d := ds.X.Dims()
	if n != 569 || d != 30 || len(ds.Features) != 30 {
		t.Fatalf("Default is %d x %d with %d names, want 569 x 30", n, d, len(ds.Features))
	}
	if !slices.Equal(ds.Classes, []string{"benign", "malignant"}) {
		t.Errorf("Classes = %q", ds.Classes)
	}
	pos := 0
	for _, v := range ds.Y {
		if v == 1 {
			pos++
		}
	}
	if pos != 212 {
		t.Errorf("%d malignant (+1) rows, want 212", pos)
	}
	if len(ds.Notes) == 0 || !strings.Contains(ds.Notes[0], "Wisconsin") {
		t.Errorf("Notes = %q, want the source first", ds.Notes)
	}
}

func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{
		"a,y\n1,p\n2,q\n",
		"a,b,y\n1,2,p\n3,4,q\n5,6,r\n",
		"a,y\n1,2\n",
		"\"a\",y\n\"1\",\"p\"\n",
		"a,y\n1e308,p\n-1e308,q\n",
		"",
		"y\n",
		"a,a\n",
	} {
		for task := range 3 {
			f.Add(s, "y", uint8(task), "")
		}
	}
	f.Add("a,y\n1,p\n2,q\n", "y", uint8(0), "q")
	f.Fuzz(func(t *testing.T, data, label string, task uint8, positive string) {
		opts := CSVOptions{Label: label, Task: losses.Task(task % 4), Positive: positive}
		ds, err := ReadCSV(strings.NewReader(data), opts)
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v wraps neither ErrFormat nor ErrInvalid", err)
			}
			return
		}
		n, d := ds.X.Dims()
		if n != len(ds.Y) || d != len(ds.Features) || n == 0 || d == 0 {
			t.Fatalf("inconsistent data set: %d x %d, %d labels, %d names", n, d, len(ds.Y), len(ds.Features))
		}
		for i := 0; i < n; i++ {
			for _, v := range ds.X.RawRowView(i) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("non-finite feature %v", v)
				}
			}
		}
		for _, v := range ds.Y {
			switch opts.Task {
			case losses.Binary:
				if v != 1 && v != -1 {
					t.Fatalf("binary label %v", v)
				}
			case losses.Multiclass:
				if v != math.Trunc(v) || v < 0 || int(v) >= len(ds.Classes) {
					t.Fatalf("class index %v of %d classes", v, len(ds.Classes))
				}
			default:
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("regression label %v", v)
				}
			}
		}
	})
}

// TestReadCSVNumericClassOrder checks that numeric class names sort as
// numbers: 9 before 10 for both binary and multiclass encodings.
func TestReadCSVNumericClassOrder(t *testing.T) {
	data := "x,y\n1,10\n2,9\n3,10\n4,9\n"
	ds, err := ReadCSV(strings.NewReader(data), CSVOptions{Label: "y"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ds.Classes, []string{"9", "10"}) || !slices.Equal(ds.Y, []float64{1, -1, 1, -1}) {
		t.Errorf("binary: classes %v, labels %v; want [9 10], 10 = +1", ds.Classes, ds.Y)
	}
	data = "x,y\n1,10\n2,9\n3,1\n"
	ds, err = ReadCSV(strings.NewReader(data), CSVOptions{Label: "y", Task: losses.Multiclass})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ds.Classes, []string{"1", "9", "10"}) || !slices.Equal(ds.Y, []float64{2, 1, 0}) {
		t.Errorf("multiclass: classes %v, labels %v", ds.Classes, ds.Y)
	}
}
