// Package fetchtest holds the helpers of the download tests of the datasets
// packages: a client that sends every request to a local test server,
// in-memory zip and tar.gz archives, and the folder of the shared real data
// sets. It is for tests only.
package fetchtest

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
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
)

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

// RedirectClient returns a client whose requests, whatever their host, go
// to srv with their path kept.
func RedirectClient(t *testing.T, srv *httptest.Server) *http.Client {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: redirectTransport{to: u, next: srv.Client().Transport}}
}

// URLPath returns the path of the URL raw.
func URLPath(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

// Zip returns a zip archive of the members {name, content}.
func Zip(t *testing.T, members [][2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		w, err := zw.Create(m[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(m[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TarGz returns a tar.gz archive of regular files {name, content} and of
// symlinks given as {name, "->target"}.
func TarGz(t *testing.T, members [][2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, m := range members {
		hdr := &tar.Header{Name: m[0], Mode: 0o644, Size: int64(len(m[1])), Typeflag: tar.TypeReg}
		if len(m[1]) > 2 && m[1][:2] == "->" {
			hdr = &tar.Header{Name: m[0], Linkname: m[1][2:], Typeflag: tar.TypeSymlink}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(m[1])); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// SHA256Hex returns the hex SHA-256 of b.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// FileServer serves path -> content over a local test server, closed at the
// end of the test, and counts the requests.
func FileServer(t *testing.T, files map[string][]byte) (*httptest.Server, *atomic.Int64) {
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

// DirNames lists the entries of dir, sorted; a missing dir has none.
func DirNames(t *testing.T, dir string) []string {
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

// SharedDir returns the directory of one of the shared real data sets:
// $STABPRIV_DATA/sub when STABPRIV_DATA is set, else shared/datasets/sub
// in the folder beside the repository, whose root is up directories above
// the test's package ("../.." for datasets/paper). It skips the test when
// the directory is absent.
func SharedDir(t testing.TB, up, sub string) string {
	t.Helper()
	root := os.Getenv("STABPRIV_DATA")
	if root == "" {
		root = filepath.Join(up, "..", "shared", "datasets")
	}
	dir := filepath.Join(root, sub)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("real data set %s not available (set STABPRIV_DATA to the folder holding it): %v", sub, err)
	}
	return dir
}
