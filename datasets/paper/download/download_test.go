package download

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stabpriv/stabpriv/datasets/fetch"
	"github.com/stabpriv/stabpriv/datasets/internal/fetchtest"
	"github.com/stabpriv/stabpriv/datasets/paper"
)

// sharedDir is fetchtest.SharedDir from this package's directory.
func sharedDir(t *testing.T, sub string) string {
	t.Helper()
	return fetchtest.SharedDir(t, filepath.Join("..", "..", ".."), sub)
}

// TestSourcesCoverRegistry checks that every registered data set has its
// canonical sources here, named and with a URL, and nothing else does.
func TestSourcesCoverRegistry(t *testing.T) {
	for _, name := range paper.Names() {
		srcs := SourcesOf(name)
		if len(srcs) == 0 {
			t.Errorf("%s: no sources", name)
		}
		for _, s := range srcs {
			if s.Name == "" || s.URL == "" {
				t.Errorf("%s: source %+v", name, s)
			}
		}
	}
	for name := range sources {
		if !slices.Contains(paper.Names(), name) {
			t.Errorf("sources of %q, which the registry does not hold", name)
		}
	}
	if n := len(Sources()); n != 4 {
		t.Errorf("%d sources, want 4", n)
	}
	if SourcesOf("csv") != nil {
		t.Error("SourcesOf(csv) found sources")
	}
}

// TestFetchRefusals checks that Fetch refuses LastFM, whose archive has no
// recorded sum, and a name the registry does not hold, before any request.
func TestFetchRefusals(t *testing.T) {
	srv, hits := fetchtest.FileServer(t, nil)
	client := fetchtest.RedirectClient(t, srv)
	if _, err := Fetch(context.Background(), "lastfm", t.TempDir(), client); !errors.Is(err, fetch.ErrNoChecksum) {
		t.Errorf("lastfm: err = %v, want fetch.ErrNoChecksum", err)
	}
	if _, err := Fetch(context.Background(), "csv", t.TempDir(), client); err == nil {
		t.Error("an unknown data set was fetched")
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}

func TestFetchAdultFromLocalServer(t *testing.T) {
	shared := sharedDir(t, "adult")
	files := map[string][]byte{}
	for _, s := range SourcesOf("adult") {
		b, err := os.ReadFile(filepath.Join(shared, s.Name))
		if err != nil {
			t.Skipf("Adult file not available: %v", err)
		}
		files[fetchtest.URLPath(t, s.URL)] = b
	}
	srv, _ := fetchtest.FileServer(t, files)
	dir := t.TempDir()
	got, err := Fetch(context.Background(), "adult", dir, fetchtest.RedirectClient(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := paper.LoadAdult(got, paper.AdultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := ds.X.Dims(); n != 45222 {
		t.Errorf("%d rows after fetching, want 45222", n)
	}
}

func TestFetchLastFMFromLocalServer(t *testing.T) {
	const (
		edges  = "node_1,node_2\n0,1\n1,2\n2,0\n3,4\n1,0\n4,4\n"
		target = "id,target\n3,5\n0,2\n1,2\n2,10\n4,5\n"
	)
	archive := fetchtest.Zip(t, [][2]string{
		{"lastfm_asia/", ""},
		{"lastfm_asia/" + paper.LastFMEdgesFile, edges},
		{"lastfm_asia/" + paper.LastFMTargetFile, target},
		{"lastfm_asia/README.txt", "not extracted"},
	})
	srv, _ := fetchtest.FileServer(t, map[string][]byte{fetchtest.URLPath(t, LastFMSource.URL): archive})
	cache := t.TempDir()
	client := fetchtest.RedirectClient(t, srv)
	if _, err := LastFM(context.Background(), cache, "", client); !errors.Is(err, fetch.ErrNoChecksum) {
		t.Fatalf("no archive sum: err = %v, want fetch.ErrNoChecksum", err)
	}
	dir, err := LastFM(context.Background(), cache, fetchtest.SHA256Hex(archive), client)
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(cache, "lastfm_asia") {
		t.Errorf("dir = %s", dir)
	}
	if names := fetchtest.DirNames(t, dir); len(names) != 2 {
		t.Errorf("extracted %v, want the edges and target files", names)
	}
	ds, err := paper.LoadLastFM(dir, paper.LastFMOptions{Components: -1})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := ds.X.Dims(); n != 5 {
		t.Errorf("%d nodes, want 5", n)
	}
}

// TestSharedFilesSHA256 checks the shared real data against the sums of
// shared/datasets/README.md.
func TestSharedFilesSHA256(t *testing.T) {
	sharedDir(t, "")
	tests := []struct{ path, sum string }{
		{"adult/adult.data", AdultDataSource.SHA256},
		{"adult/adult.test", AdultTestSource.SHA256},
		{"lastfm_asia/" + paper.LastFMEdgesFile, paper.LastFMEdgesSHA256},
		{"lastfm_asia/" + paper.LastFMTargetFile, paper.LastFMTargetSHA256},
		{"gene_all/data.csv.gz", "8f9a79bf951a6c171d7a120ff2075e4ba05117a2aed8551983202a36afff3844"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			dir := sharedDir(t, filepath.Dir(tc.path))
			got, err := fetch.FileSHA256(filepath.Join(dir, filepath.Base(tc.path)))
			if errors.Is(err, os.ErrNotExist) {
				t.Skipf("%s not available", tc.path)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.sum {
				t.Errorf("sha256 %s, want %s", got, tc.sum)
			}
		})
	}
}
