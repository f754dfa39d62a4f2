package paper

import (
	"errors"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets/preprocess"
)

// A 5-node graph with node ids out of order, a repeated edge and a
// self-loop, and 3 classes.
const (
	lastfmSmallEdges  = "node_1,node_2\n0,1\n1,2\n2,0\n3,4\n1,0\n4,4\n"
	lastfmSmallTarget = "id,target\n3,5\n0,2\n1,2\n2,10\n4,5\n"
)

var lastfmSmallAdjacency = []float64{
	0, 1, 1, 0, 0,
	1, 0, 1, 0, 0,
	1, 1, 0, 0, 0,
	0, 0, 0, 0, 1,
	0, 0, 0, 1, 1,
}

func TestLoadLastFMGraphFeatures(t *testing.T) {
	dir := writeTestFiles(t, map[string]string{LastFMEdgesFile: lastfmSmallEdges, LastFMTargetFile: lastfmSmallTarget})
	adj := mat.NewDense(5, 5, lastfmSmallAdjacency)

	raw, err := LoadLastFM(dir, LastFMOptions{Components: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(raw.X, adj) {
		t.Errorf("raw X = %v, want the adjacency", mat.Formatted(raw.X))
	}
	if want := []float64{0, 0, 2, 1, 1}; !reflect.DeepEqual(raw.Y, want) {
		t.Errorf("Y = %v, want %v", raw.Y, want)
	}
	if want := []string{"2", "5", "10"}; !reflect.DeepEqual(raw.Classes, want) {
		t.Errorf("Classes = %q, want %q", raw.Classes, want)
	}
	if notes := strings.Join(raw.Notes, "\n"); !strings.Contains(notes, "derived from the graph") || !strings.Contains(notes, "is absent") {
		t.Errorf("Notes %q do not say the features come from the graph", raw.Notes)
	}

	two, err := LoadLastFM(dir, LastFMOptions{Components: -1, TwoHop: true})
	if err != nil {
		t.Fatal(err)
	}
	var a2 mat.Dense
	a2.Mul(adj, adj)
	if n, d := two.X.Dims(); n != 5 || d != 10 || !mat.Equal(two.X.Slice(0, 5, 5, 10), &a2) || len(two.Features) != 10 {
		t.Errorf("TwoHop X = %v, want [A | A^2]", mat.Formatted(two.X))
	}

	red, err := LoadLastFM(dir, LastFMOptions{Components: 2, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := preprocess.TruncatedSVD(adj, 2, lastfmOversample, lastfmPowerIters, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(red.X, want, 1e-12) {
		t.Errorf("reduced X = %v, want the SVD of the dense adjacency %v", mat.Formatted(red.X), mat.Formatted(want))
	}
	if !reflect.DeepEqual(red.Features, []string{"svd1", "svd2"}) {
		t.Errorf("Features = %v", red.Features)
	}
}

func TestLoadLastFMArtists(t *testing.T) {
	files := map[string]string{
		LastFMEdgesFile:    lastfmSmallEdges,
		LastFMTargetFile:   lastfmSmallTarget,
		LastFMFeaturesFile: `{"0": [7, 3], "1": [3, 3], "2": [], "3": [12], "99": [1]}`,
	}
	dir := writeTestFiles(t, files)
	ds, err := LoadLastFM(dir, LastFMOptions{Components: -1})
	if err != nil {
		t.Fatal(err)
	}
	// Artists 3, 7, 12 (artist 1 belongs to an unknown user, ignored but
	// still a column); node 4 is absent from the file.
	want := mat.NewDense(5, 4, []float64{
		0, 1, 1, 0,
		0, 1, 0, 0,
		0, 0, 0, 0,
		0, 0, 0, 1,
		0, 0, 0, 0,
	})
	if !mat.Equal(ds.X, want) {
		t.Errorf("X = %v, want %v", mat.Formatted(ds.X), mat.Formatted(want))
	}
	if ds.Features[1] != "artist_3" {
		t.Errorf("Features = %v", ds.Features)
	}
	if strings.Contains(strings.Join(ds.Notes, "\n"), "derived from the graph") {
		t.Errorf("Notes %q claim graph features", ds.Notes)
	}

	g, err := LoadLastFM(dir, LastFMOptions{Components: -1, IgnoreArtists: true})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(g.X, mat.NewDense(5, 5, lastfmSmallAdjacency)) || !strings.Contains(strings.Join(g.Notes, "\n"), "ignored") {
		t.Errorf("IgnoreArtists: X %v, Notes %q", mat.Formatted(g.X), g.Notes)
	}
}

func TestLoadLastFMErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  error
	}{
		{name: "unknown node", files: map[string]string{LastFMEdgesFile: "a,b\n0,9\n", LastFMTargetFile: lastfmSmallTarget}, want: ErrLastFMFormat},
		{name: "duplicate id", files: map[string]string{LastFMEdgesFile: "a,b\n", LastFMTargetFile: "id,target\n0,1\n0,2\n"}, want: ErrLastFMFormat},
		{name: "bad integer", files: map[string]string{LastFMEdgesFile: "a,b\n0,x\n", LastFMTargetFile: lastfmSmallTarget}, want: ErrLastFMFormat},
		{name: "negative id", files: map[string]string{LastFMEdgesFile: "a,b\n", LastFMTargetFile: "id,target\n-1,1\n0,2\n"}, want: ErrLastFMFormat},
		{name: "three columns", files: map[string]string{LastFMEdgesFile: "a,b\n0,1,2\n", LastFMTargetFile: lastfmSmallTarget}, want: ErrLastFMFormat},
		{name: "one class", files: map[string]string{LastFMEdgesFile: "a,b\n0,1\n", LastFMTargetFile: "id,target\n0,1\n1,1\n"}, want: ErrLastFMFormat},
		{name: "no nodes", files: map[string]string{LastFMEdgesFile: "a,b\n", LastFMTargetFile: "id,target\n"}, want: ErrLastFMFormat},
		{name: "bad JSON", files: map[string]string{LastFMEdgesFile: lastfmSmallEdges, LastFMTargetFile: lastfmSmallTarget, LastFMFeaturesFile: "{"}, want: ErrLastFMFormat},
		{name: "no artists", files: map[string]string{LastFMEdgesFile: lastfmSmallEdges, LastFMTargetFile: lastfmSmallTarget, LastFMFeaturesFile: "{}"}, want: ErrLastFMFormat},
		{name: "no edges file", files: map[string]string{LastFMTargetFile: lastfmSmallTarget}, want: os.ErrNotExist},
		{name: "no target file", files: map[string]string{LastFMEdgesFile: lastfmSmallEdges}, want: os.ErrNotExist},
		{name: "too many components", files: map[string]string{LastFMEdgesFile: lastfmSmallEdges, LastFMTargetFile: lastfmSmallTarget}, want: preprocess.ErrSVD},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadLastFM(writeTestFiles(t, tc.files), LastFMOptions{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSparseRowMatrix(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const r, c, l = 13, 9, 4
	rows := make([][]int, r)
	for i := range rows {
		for j := range c {
			if rng.Float64() < 0.3 {
				rows[i] = append(rows[i], j)
			}
		}
	}
	s := newSparseIndicator(c, rows)
	dense := s.toDense()
	for i := range r {
		for j := range c {
			if s.At(i, j) != dense.At(i, j) {
				t.Fatalf("At(%d, %d) = %v, dense %v", i, j, s.At(i, j), dense.At(i, j))
			}
		}
	}
	b := mat.NewDense(c, l, nil)
	bt := mat.NewDense(r, l, nil)
	for _, m := range []*mat.Dense{b, bt} {
		raw := m.RawMatrix().Data
		for i := range raw {
			raw[i] = rng.NormFloat64()
		}
	}
	got := mat.NewDense(r, l, nil)
	s.MulTo(got, b)
	var want mat.Dense
	want.Mul(dense, b)
	if !mat.EqualApprox(got, &want, 1e-12) {
		t.Error("MulTo differs from the dense product")
	}
	gotT := mat.NewDense(c, l, nil)
	s.MulTransTo(gotT, bt)
	var wantT mat.Dense
	wantT.Mul(dense.T(), bt)
	if !mat.EqualApprox(gotT, &wantT, 1e-12) {
		t.Error("MulTransTo differs from the dense product")
	}
	var sq mat.Dense
	sq.Mul(dense, dense.T())
	tr := newSparseIndicator(r, transposeRows(rows, c))
	if !mat.Equal(s.mulSparse(tr).toDense(), &sq) {
		t.Error("mulSparse differs from the dense product")
	}
}

func transposeRows(rows [][]int, c int) [][]int {
	t := make([][]int, c)
	for i, row := range rows {
		for _, j := range row {
			t[j] = append(t[j], i)
		}
	}
	return t
}

func TestLoadLastFMReal(t *testing.T) {
	dir := realDatasetDir(t, "lastfm_asia")
	ds, err := LoadLastFM(dir, LastFMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, d := ds.X.Dims()
	if n != 7624 || d != DefaultLastFMComponents || len(ds.Y) != n {
		t.Fatalf("dims %d x %d, want 7624 x %d", n, d, DefaultLastFMComponents)
	}
	if len(ds.Classes) != 18 {
		t.Errorf("%d classes, want 18", len(ds.Classes))
	}
	for _, y := range ds.Y {
		if y < 0 || y > 17 || y != float64(int(y)) {
			t.Fatalf("label %v not a class index", y)
		}
	}
	notes := strings.Join(ds.Notes, "\n")
	if !strings.Contains(notes, "derived from the graph") || !strings.Contains(notes, "27806 edges") {
		t.Errorf("Notes = %q", ds.Notes)
	}
	t.Logf("LastFM: %d x %d, notes: %s", n, d, notes)
}
