package paper

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/internal/fetchtest"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
)

// realDatasetDir returns the directory of one of the shared real data sets
// (fetchtest.SharedDir): $STABPRIV_DATA/sub, else
// ../../../shared/datasets/sub. It skips the test when the directory is
// absent.
func realDatasetDir(t testing.TB, sub string) string {
	t.Helper()
	return fetchtest.SharedDir(t, filepath.Join("..", ".."), sub)
}

// writeTestFiles writes name -> content files into a temporary directory.
func writeTestFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const (
	adultLineTrain = "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K"
	adultLineTest  = "38, Private, 89814, HS-grad, 9, Married-civ-spouse, Farming-fishing, Husband, White, Male, 0, 0, 50, United-States, >50K."
	adultLineMiss  = "18, ?, 103497, Some-college, 10, Never-married, ?, Own-child, White, Female, 0, 0, 30, ?, <=50K."
)

func TestParseAdultLine(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		wantErr  bool
		positive bool
		missing  bool
		num0     float64
		cat0     string
	}{
		{name: "train", line: adultLineTrain, num0: 39, cat0: "State-gov"},
		{name: "test label with dot", line: adultLineTest, positive: true, num0: 38, cat0: "Private"},
		{name: "missing", line: adultLineMiss, missing: true, num0: 18, cat0: "?"},
		{name: "too few fields", line: "39, State-gov, 77516", wantErr: true},
		{name: "too many fields", line: adultLineTrain + ", extra", wantErr: true},
		{name: "bad number", line: strings.Replace(adultLineTrain, "77516", "7x", 1), wantErr: true},
		{name: "NaN number", line: strings.Replace(adultLineTrain, "77516", "NaN", 1), wantErr: true},
		{name: "bad label", line: strings.Replace(adultLineTrain, "<=50K", "50K", 1), wantErr: true},
		{name: "empty category", line: strings.Replace(adultLineTrain, "State-gov", " ", 1), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := parseAdultLine(tc.line)
			if tc.wantErr {
				if !errors.Is(err, ErrAdultFormat) {
					t.Fatalf("err = %v, want ErrAdultFormat", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.positive != tc.positive || r.missing != tc.missing || r.num[0] != tc.num0 || r.cat[0] != tc.cat0 {
				t.Errorf("got %+v", r)
			}
		})
	}
}

func TestLoadAdultSmall(t *testing.T) {
	data := adultLineTrain + "\n" +
		"50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 13, United-States, >50K\n" +
		"25, ?, 1000, HS-grad, 9, Never-married, ?, Own-child, Black, Female, 0, 0, 20, ?, <=50K\n\n"
	test := "|1x3 Cross validator\n" + adultLineTest + "\n"
	dir := writeTestFiles(t, map[string]string{AdultTrainFile: data, AdultTestFile: test})

	ds, err := LoadAdult(dir, AdultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, d := ds.X.Dims()
	// Categories after dropping the '?' row: workclass 3, education 2,
	// marital 2, occupation 3, relationship 2, race 1, sex 1, country 1.
	if n != 3 || d != adultNumericCols+15 {
		t.Fatalf("dims %d x %d, want 3 x %d", n, d, adultNumericCols+15)
	}
	if want := []float64{-1, 1, 1}; !reflect.DeepEqual(ds.Y, want) {
		t.Errorf("Y = %v, want %v", ds.Y, want)
	}
	if want := []string{"<=50K", ">50K"}; !reflect.DeepEqual(ds.Classes, want) {
		t.Errorf("Classes = %v", ds.Classes)
	}
	wantHead := []string{"age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week",
		"workclass=Private", "workclass=Self-emp-not-inc", "workclass=State-gov"}
	if !reflect.DeepEqual(ds.Features[:len(wantHead)], wantHead) {
		t.Errorf("Features start %v, want %v", ds.Features[:len(wantHead)], wantHead)
	}
	// Row 0 is State-gov: numeric values first, then its indicator.
	row := ds.X.RawRowView(0)
	if row[0] != 39 || row[1] != 77516 || row[6] != 0 || row[8] != 1 {
		t.Errorf("row 0 = %v", row[:9])
	}
	for i := range n {
		sum := 0.0
		for _, v := range ds.X.RawRowView(i)[adultNumericCols:] {
			sum += v
		}
		if sum != adultCatCols {
			t.Errorf("row %d has %v indicators set, want %d", i, sum, adultCatCols)
		}
	}
	if !strings.Contains(strings.Join(ds.Notes, "\n"), "2 of 3 records kept, 1 with a missing value") {
		t.Errorf("Notes %q lack the dropped count", ds.Notes)
	}

	keep, err := LoadAdult(dir, AdultOptions{KeepMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := keep.X.Dims(); n != 4 {
		t.Errorf("KeepMissing: %d rows, want 4", n)
	}
	if !contains(keep.Features, "workclass=?") {
		t.Errorf("KeepMissing: no '?' category in %v", keep.Features)
	}

	train, testDS, err := LoadAdultSplit(dir, AdultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(train.Features, testDS.Features) || !reflect.DeepEqual(train.Features, ds.Features) {
		t.Error("split parts do not share the concatenated data's columns")
	}
	if nt, _ := train.X.Dims(); nt != 2 {
		t.Errorf("train rows %d, want 2", nt)
	}
	if ne, _ := testDS.X.Dims(); ne != 1 || testDS.Y[0] != 1 {
		t.Errorf("test rows %d, Y %v", ne, testDS.Y)
	}
}

func TestLoadAdultErrors(t *testing.T) {
	numMissing := strings.Replace(adultLineTrain, "77516", "?", 1)
	tests := []struct {
		name  string
		files map[string]string
		opts  AdultOptions
		want  error
	}{
		{name: "no test file", files: map[string]string{AdultTrainFile: adultLineTrain + "\n"}, want: os.ErrNotExist},
		{name: "bad line", files: map[string]string{AdultTrainFile: "1, 2\n", AdultTestFile: adultLineTest + "\n"}, want: ErrAdultFormat},
		{name: "empty", files: map[string]string{AdultTrainFile: "", AdultTestFile: "|junk\n"}, want: ErrAdultFormat},
		{name: "kept numeric missing", files: map[string]string{AdultTrainFile: numMissing + "\n", AdultTestFile: adultLineTest + "\n"},
			opts: AdultOptions{KeepMissing: true}, want: ErrAdultFormat},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadAdult(writeTestFiles(t, tc.files), tc.opts)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestLoadAdultReal(t *testing.T) {
	dir := realDatasetDir(t, "adult")
	ds, err := LoadAdult(dir, AdultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, d := ds.X.Dims()
	// 6 numeric columns + 98 indicators (workclass 7, education 16,
	// marital-status 7, occupation 14, relationship 6, race 5, sex 2,
	// native-country 41).
	if n != 45222 || d != 104 || len(ds.Features) != d || len(ds.Y) != n {
		t.Fatalf("dims %d x %d (%d names, %d labels), want 45222 x 104", n, d, len(ds.Features), len(ds.Y))
	}
	pos := 0
	for _, v := range ds.Y {
		if v == 1 {
			pos++
		}
	}
	if frac := float64(pos) / float64(n); frac < 0.245 || frac > 0.251 {
		t.Errorf("positive fraction %.4f, want about 0.248", frac)
	}
	t.Logf("Adult: %d rows x %d features, %d positive (%.4f)", n, d, pos, float64(pos)/float64(n))

	train, test, err := LoadAdultSplit(dir, AdultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nt, dt := train.X.Dims()
	ne, de := test.X.Dims()
	if nt != 30162 || ne != 15060 || dt != d || de != d {
		t.Errorf("split %d x %d and %d x %d, want 30162 and 15060 rows of %d", nt, dt, ne, de, d)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestAdultPaperPipelineReal runs the preprocessing of the stability-privacy
// paper's Adult experiments: one-hot, truncated SVD to 32, an 80/20 split,
// standardization fitted on the training split, rows into the unit ball with
// a constant feature.
func TestAdultPaperPipelineReal(t *testing.T) {
	ds, err := LoadAdult(realDatasetDir(t, "adult"), AdultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	reduced, _, err := preprocess.ReduceSVD(ds, nil, 32, 10, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("truncated SVD of %d x %d to 32: %v", ds.X.RawMatrix().Rows, ds.X.RawMatrix().Cols, time.Since(start))
	train, test, err := datasets.Split(reduced, 0.2, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	std, err := preprocess.FitStandardizer(train.X)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []*datasets.Dataset{train, test} {
		s, err := std.Transform(part)
		if err != nil {
			t.Fatal(err)
		}
		u, err := preprocess.UnitBallWithBias(s)
		if err != nil {
			t.Fatal(err)
		}
		n, d := u.X.Dims()
		if d != 33 {
			t.Fatalf("%d columns, want 32 + bias", d)
		}
		for i := range n {
			if norm := floats.Norm(u.X.RawRowView(i), 2); norm > 1+1e-12 {
				t.Fatalf("row %d has norm %v > 1", i, norm)
			}
		}
	}
	if nt, _ := train.X.Dims(); nt != 36178 {
		t.Errorf("%d training rows, want 36178 (80%% of 45222)", nt)
	}
}
