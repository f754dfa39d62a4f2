package paper

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/stabpriv/stabpriv/datasets/fetch"
)

func TestFetchAdultFromLocalServer(t *testing.T) {
	shared := realDatasetDir(t, "adult")
	files := map[string][]byte{}
	for _, s := range []fetch.Source{AdultDataSource, AdultTestSource} {
		b, err := os.ReadFile(filepath.Join(shared, s.Name))
		if err != nil {
			t.Skipf("Adult file not available: %v", err)
		}
		files[urlPath(t, s.URL)] = b
	}
	srv, _ := fileServer(t, files)
	dir := t.TempDir()
	if err := FetchAdult(context.Background(), dir, redirectClient(t, srv)); err != nil {
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
	archive := buildZip(t, [][2]string{
		{"lastfm_asia/", ""},
		{"lastfm_asia/" + LastFMEdgesFile, lastfmSmallEdges},
		{"lastfm_asia/" + LastFMTargetFile, lastfmSmallTarget},
		{"lastfm_asia/README.txt", "not extracted"},
	})
	srv, _ := fileServer(t, map[string][]byte{urlPath(t, LastFMSource.URL): archive})
	cache := t.TempDir()
	client := redirectClient(t, srv)
	if _, err := FetchLastFM(context.Background(), cache, "", client); !errors.Is(err, fetch.ErrNoChecksum) {
		t.Fatalf("no archive sum: err = %v, want fetch.ErrNoChecksum", err)
	}
	dir, err := FetchLastFM(context.Background(), cache, sha256Hex(archive), client)
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(cache, "lastfm_asia") {
		t.Errorf("dir = %s", dir)
	}
	if names := dirNames(t, dir); len(names) != 2 {
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

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// fileServer serves name -> content over a local httptest server and counts
// the requests.
func fileServer(t *testing.T, files map[string][]byte) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// dirNames lists the entries of dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// redirectTransport sends every request to a local test server, keeping the
// path, so the canonical URLs can be exercised offline.
type redirectTransport struct {
	to   *url.URL
	next http.RoundTripper
}

func (rt redirectTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := r.Clone(r.Context())
	r2.URL.Scheme, r2.URL.Host, r2.Host = rt.to.Scheme, rt.to.Host, rt.to.Host
	return rt.next.RoundTrip(r2)
}

func redirectClient(t *testing.T, srv *httptest.Server) *http.Client {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: redirectTransport{to: u, next: srv.Client().Transport}}
}

func urlPath(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

// buildZip returns a zip archive of name -> content.
func buildZip(t *testing.T, members [][2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		w, err := zw.Create(m[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(m[1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
