package paper

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

const (
	tcgaSmallData   = ",g1,g2,g3\nsample_0,1.5,2,3\nsample_1,4,5,6\nsample_2,7,8,9e-1\n"
	tcgaSmallLabels = "\"\",\"Class\",\"Subtype\"\n\"sample_2\",\"T\",\"x\"\nsample_1,B,y\nsample_0,B,z\nsample_9,T,w\n"
)

func TestReadTCGA(t *testing.T) {
	tests := []struct {
		name    string
		labels  string
		opts    TCGAOptions
		y       []float64
		classes []string
	}{
		{name: "binary default", labels: tcgaSmallLabels, y: []float64{-1, -1, 1}, classes: []string{"B", "T"}},
		{name: "binary positive B", labels: tcgaSmallLabels, opts: TCGAOptions{Positive: "B"}, y: []float64{1, 1, -1}, classes: []string{"T", "B"}},
		{name: "multiclass column", labels: tcgaSmallLabels, opts: TCGAOptions{LabelColumn: "Subtype"}, y: []float64{2, 1, 0}, classes: []string{"x", "y", "z"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := ReadTCGA(strings.NewReader(tcgaSmallData), strings.NewReader(tc.labels), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			want := mat.NewDense(3, 3, []float64{1.5, 2, 3, 4, 5, 6, 7, 8, 0.9})
			if !mat.Equal(ds.X, want) {
				t.Errorf("X = %v", mat.Formatted(ds.X))
			}
			if !reflect.DeepEqual(ds.Features, []string{"g1", "g2", "g3"}) {
				t.Errorf("Features = %v", ds.Features)
			}
			if !reflect.DeepEqual(ds.Y, tc.y) || !reflect.DeepEqual(ds.Classes, tc.classes) {
				t.Errorf("Y, Classes = %v %q, want %v %q", ds.Y, ds.Classes, tc.y, tc.classes)
			}
			if !strings.Contains(strings.Join(ds.Notes, "\n"), "1 labelled samples absent") {
				t.Errorf("Notes %q do not count the unused label", ds.Notes)
			}
		})
	}
}

func TestReadTCGAErrors(t *testing.T) {
	tests := []struct {
		name, data, labels string
		opts               TCGAOptions
	}{
		{name: "missing label", data: tcgaSmallData, labels: ",Class\nsample_0,B\nsample_1,T\n"},
		{name: "duplicate data id", data: ",g1\ns0,1\ns0,2\n", labels: ",Class\ns0,B\n"},
		{name: "duplicate label id", data: ",g1\ns0,1\ns1,2\n", labels: ",Class\ns0,B\ns1,T\ns0,T\n"},
		{name: "no label column", data: tcgaSmallData, labels: tcgaSmallLabels, opts: TCGAOptions{LabelColumn: "Tumor"}},
		{name: "ragged row", data: ",g1,g2\ns0,1\n", labels: ",Class\ns0,B\n"},
		{name: "NA value", data: ",g1\ns0,NA\ns1,1\n", labels: ",Class\ns0,B\ns1,T\n"},
		{name: "infinite value", data: ",g1\ns0,Inf\ns1,1\n", labels: ",Class\ns0,B\ns1,T\n"},
		{name: "no samples", data: ",g1\n", labels: ",Class\ns0,B\n"},
		{name: "no genes", data: "id\ns0\n", labels: ",Class\ns0,B\n"},
		{name: "empty label", data: ",g1\ns0,1\ns1,2\n", labels: ",Class\ns0,\ns1,T\n"},
		{name: "one class", data: ",g1\ns0,1\ns1,2\n", labels: ",Class\ns0,B\ns1,B\n"},
		{name: "empty data", data: "", labels: ",Class\ns0,B\n"},
		{name: "empty labels", data: tcgaSmallData, labels: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTCGA(strings.NewReader(tc.data), strings.NewReader(tc.labels), tc.opts)
			if !errors.Is(err, ErrTCGAFormat) {
				t.Fatalf("err = %v, want ErrTCGAFormat", err)
			}
		})
	}
}

func TestLoadTCGAFiles(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(tcgaSmallData))
	zw.Close()
	tests := []struct {
		name  string
		files map[string]string
		want  error
	}{
		{name: "plain", files: map[string]string{TCGADataFile: tcgaSmallData, TCGALabelsFile: tcgaSmallLabels}},
		{name: "gzip", files: map[string]string{TCGADataFile + ".gz": gz.String(), TCGALabelsFile: tcgaSmallLabels}},
		{name: "corrupt gzip", files: map[string]string{TCGADataFile + ".gz": "not gzip", TCGALabelsFile: tcgaSmallLabels}, want: ErrTCGAFormat},
		{name: "no data", files: map[string]string{TCGALabelsFile: tcgaSmallLabels}, want: os.ErrNotExist},
		{name: "no labels", files: map[string]string{TCGADataFile: tcgaSmallData}, want: os.ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := LoadTCGA(writeTestFiles(t, tc.files), TCGAOptions{})
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n, d := ds.X.Dims(); n != 3 || d != 3 {
				t.Errorf("dims %d x %d", n, d)
			}
		})
	}
}

func TestLoadTCGAReal(t *testing.T) {
	dir := realDatasetDir(t, "gene_all")
	if _, err := os.Stat(filepath.Join(dir, TCGADataFile+".gz")); err != nil {
		t.Skipf("gene_all data not available: %v", err)
	}
	ds, err := LoadTCGA(dir, TCGAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, d := ds.X.Dims()
	if n != 128 || d != 12625 || len(ds.Features) != d {
		t.Fatalf("dims %d x %d, want 128 x 12625", n, d)
	}
	if !reflect.DeepEqual(ds.Classes, []string{"B", "T"}) {
		t.Fatalf("Classes = %q", ds.Classes)
	}
	count := map[float64]int{}
	for _, v := range ds.Y {
		count[v]++
	}
	if count[-1] != 95 || count[1] != 33 {
		t.Errorf("B/T counts %d/%d, want 95/33", count[-1], count[1])
	}
	if ds.Features[0] != "X1000_at" || ds.X.At(0, 0) != 7.5973 {
		t.Errorf("first cell %s = %v, want X1000_at = 7.5973", ds.Features[0], ds.X.At(0, 0))
	}
}
