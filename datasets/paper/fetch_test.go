package paper

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stabpriv/stabpriv/datasets/fetch"
	"github.com/stabpriv/stabpriv/datasets/internal/fetchtest"
)

func TestFetchAdultFromLocalServer(t *testing.T) {
	shared := realDatasetDir(t, "adult")
	files := map[string][]byte{}
	for _, s := range []fetch.Source{AdultDataSource, AdultTestSource} {
		b, err := os.ReadFile(filepath.Join(shared, s.Name))
		if err != nil {
			t.Skipf("Adult file not available: %v", err)
		}
		files[fetchtest.URLPath(t, s.URL)] = b
	}
	srv, _ := fetchtest.FileServer(t, files)
	dir := t.TempDir()
	if err := FetchAdult(context.Background(), dir, fetchtest.RedirectClient(t, srv)); err != nil {
		t.Fatal(err)
	}
	ds, err := LoadAdult(dir, AdultOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := ds.X.Dims(); n != 45222 {
		t.Errorf("%d rows after fetching, want 45222", n)
	}
}

func TestFetchLastFMFromLocalServer(t *testing.T) {
	archive := fetchtest.Zip(t, [][2]string{
		{"lastfm_asia/", ""},
		{"lastfm_asia/" + LastFMEdgesFile, lastfmSmallEdges},
		{"lastfm_asia/" + LastFMTargetFile, lastfmSmallTarget},
		{"lastfm_asia/README.txt", "not extracted"},
	})
	srv, _ := fetchtest.FileServer(t, map[string][]byte{fetchtest.URLPath(t, LastFMSource.URL): archive})
	cache := t.TempDir()
	client := fetchtest.RedirectClient(t, srv)
	if _, err := FetchLastFM(context.Background(), cache, "", client); !errors.Is(err, fetch.ErrNoChecksum) {
		t.Fatalf("no archive sum: err = %v, want fetch.ErrNoChecksum", err)
	}
	dir, err := FetchLastFM(context.Background(), cache, fetchtest.SHA256Hex(archive), client)
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(cache, "lastfm_asia") {
		t.Errorf("dir = %s", dir)
	}
	if names := fetchtest.DirNames(t, dir); len(names) != 2 {
		t.Errorf("extracted %v, want the edges and target files", names)
	}
	ds, err := LoadLastFM(dir, LastFMOptions{Components: -1})
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
	realDatasetDir(t, "")
	tests := []struct{ path, sum string }{
		{"adult/adult.data", AdultDataSource.SHA256},
		{"adult/adult.test", AdultTestSource.SHA256},
		{"lastfm_asia/" + LastFMEdgesFile, LastFMEdgesSHA256},
		{"lastfm_asia/" + LastFMTargetFile, LastFMTargetSHA256},
		{"gene_all/data.csv.gz", "8f9a79bf951a6c171d7a120ff2075e4ba05117a2aed8551983202a36afff3844"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			dir := realDatasetDir(t, filepath.Dir(tc.path))
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
