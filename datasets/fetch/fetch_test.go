package fetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stabpriv/stabpriv/datasets/internal/fetchtest"
)

func TestFetch(t *testing.T) {
	content := []byte("1 1:0.5\n0 2:1\n")
	sum := fetchtest.SHA256Hex(content)
	srv, hits := fetchtest.FileServer(t, map[string][]byte{"/data/file.txt": content})
	ctx := context.Background()
	cache := filepath.Join(t.TempDir(), "cache")
	cfg := Config{URL: srv.URL + "/data/file.txt", SHA256: sum, CacheDir: cache, Client: srv.Client()}

	path, err := File(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, content) || filepath.Base(path) != "file.txt" {
		t.Fatalf("downloaded %q to %s", got, path)
	}
	if h := hits.Load(); h != 1 {
		t.Errorf("%d requests for a download, want 1", h)
	}

	// Cache hit: no request.
	if _, err := File(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if h := hits.Load(); h != 1 {
		t.Errorf("%d requests after a cache hit, want 1", h)
	}

	// A corrupt cached copy is replaced.
	if err := os.WriteFile(path, []byte("corrupt"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := File(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, content) || hits.Load() != 2 {
		t.Errorf("corrupt cache not replaced: %q after %d requests", got, hits.Load())
	}
	if names := fetchtest.DirNames(t, cache); len(names) != 1 {
		t.Errorf("cache holds %v, want only file.txt", names)
	}
}

func TestFetchFailuresLeaveNoFile(t *testing.T) {
	content := []byte("payload")
	srv, _ := fetchtest.FileServer(t, map[string][]byte{"/f": content})
	block := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-block:
		}
	}))
	t.Cleanup(func() { close(block); slow.Close() })

	tests := []struct {
		name string
		url  string
		sum  string
		max  int64
		// midBody cancels the request once the body has delivered its
		// first bytes.
		midBody bool
		check   func(error) bool
	}{
		{name: "hash mismatch", url: srv.URL + "/f", sum: fetchtest.SHA256Hex([]byte("other")),
			check: func(err error) bool { return errors.Is(err, ErrChecksum) }},
		{name: "HTTP 404", url: srv.URL + "/missing", sum: fetchtest.SHA256Hex(content),
			check: func(err error) bool {
				var he *HTTPStatusError
				return errors.As(err, &he) && he.StatusCode == http.StatusNotFound
			}},
		{name: "too large", url: srv.URL + "/f", sum: fetchtest.SHA256Hex(content), max: 3,
			check: func(err error) bool { return err != nil }},
		{name: "context cancelled mid-body", url: slow.URL + "/f", sum: fetchtest.SHA256Hex(content), midBody: true,
			check: func(err error) bool { return errors.Is(err, context.Canceled) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var client *http.Client
			if tc.midBody {
				client = &http.Client{Transport: cancelOnBody{cancel}}
			}
			cache := t.TempDir()
			_, err := File(ctx, Config{URL: tc.url, SHA256: tc.sum, CacheDir: cache, FileName: "out", MaxBytes: tc.max, Client: client})
			if !tc.check(err) {
				t.Fatalf("unexpected error %v", err)
			}
			if names := fetchtest.DirNames(t, cache); len(names) != 0 {
				t.Errorf("files left behind: %v", names)
			}
		})
	}
}

// cancelOnBody is an http.RoundTripper that calls cancel once a response
// body has delivered its first bytes: the cancellation comes in the middle
// of the body, whatever the machine's speed (a timeout could fire before
// the response, or after the body).
type cancelOnBody struct{ cancel context.CancelFunc }

func (c cancelOnBody) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = &cancelReader{ReadCloser: resp.Body, cancel: c.cancel}
	}
	return resp, err
}

// cancelReader calls cancel after its first read of some bytes.
type cancelReader struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (r *cancelReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if n > 0 {
		r.cancel()
	}
	return n, err
}

func TestFetchCancelledBeforeRequest(t *testing.T) {
	srv, hits := fetchtest.FileServer(t, map[string][]byte{"/f": []byte("x")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := File(ctx, Config{URL: srv.URL + "/f", SHA256: fetchtest.SHA256Hex([]byte("x")), CacheDir: t.TempDir()})
	if !errors.Is(err, context.Canceled) || hits.Load() != 0 {
		t.Fatalf("err = %v after %d requests, want context.Canceled and none", err, hits.Load())
	}
}

func TestFetchConfigErrors(t *testing.T) {
	sum := fetchtest.SHA256Hex([]byte("x"))
	tests := []struct {
		name string
		cfg  Config
		want error
	}{
		{name: "no checksum", cfg: Config{URL: "http://127.0.0.1/f", CacheDir: "c"}, want: ErrNoChecksum},
		{name: "short checksum", cfg: Config{URL: "http://127.0.0.1/f", SHA256: "abcd", CacheDir: "c"}, want: ErrConfig},
		{name: "no cache dir", cfg: Config{URL: "http://127.0.0.1/f", SHA256: sum}, want: ErrConfig},
		{name: "not http", cfg: Config{URL: "file:///etc/passwd", SHA256: sum, CacheDir: "c"}, want: ErrConfig},
		{name: "traversing file name", cfg: Config{URL: "http://127.0.0.1/f", SHA256: sum, CacheDir: "c", FileName: "../f"}, want: ErrConfig},
		{name: "URL without file name", cfg: Config{URL: "http://127.0.0.1/", SHA256: sum, CacheDir: "c"}, want: ErrConfig},
		{name: "negative MaxBytes", cfg: Config{URL: "http://127.0.0.1/f", SHA256: sum, CacheDir: "c", MaxBytes: -1}, want: ErrConfig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := File(context.Background(), tc.cfg); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestExtractArchives(t *testing.T) {
	type extractor func(archive, dest string, names ...string) ([]string, error)
	formats := []struct {
		name  string
		build func(*testing.T, [][2]string) []byte
		fn    extractor
	}{
		{"zip", fetchtest.Zip, ExtractZip},
		{"tar.gz", fetchtest.TarGz, ExtractTarGz},
	}
	tests := []struct {
		name    string
		members [][2]string
		names   []string
		want    []string // relative paths written
		wantErr error
	}{
		{name: "selected members", members: [][2]string{{"TCGA/data.csv", "d"}, {"TCGA/labels.csv", "l"}, {"TCGA/other.csv", "o"}},
			names: []string{"data.csv", "labels.csv"}, want: []string{"TCGA/data.csv", "TCGA/labels.csv"}},
		{name: "all members", members: [][2]string{{"a.txt", "a"}, {"./sub/b.txt", "b"}}, want: []string{"a.txt", "sub/b.txt"}},
		{name: "parent traversal", members: [][2]string{{"../data.csv", "evil"}}, names: []string{"data.csv"}, wantErr: ErrUnsafePath},
		{name: "inner traversal", members: [][2]string{{"x/../../data.csv", "evil"}}, wantErr: ErrUnsafePath},
		{name: "absolute path", members: [][2]string{{"/tmp/data.csv", "evil"}}, wantErr: ErrUnsafePath},
		{name: "backslash path", members: [][2]string{{`..\data.csv`, "evil"}}, wantErr: ErrUnsafePath},
		{name: "unselected unsafe member ignored", members: [][2]string{{"../README", "x"}, {"labels.csv", "l"}},
			names: []string{"labels.csv"}, want: []string{"labels.csv"}},
	}
	for _, f := range formats {
		for _, tc := range tests {
			t.Run(f.name+"/"+tc.name, func(t *testing.T) {
				root := t.TempDir()
				archive := filepath.Join(root, "archive")
				if err := os.WriteFile(archive, f.build(t, tc.members), 0o644); err != nil {
					t.Fatal(err)
				}
				dest := filepath.Join(root, "dest", "inner")
				written, err := f.fn(archive, dest, tc.names...)
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) {
						t.Fatalf("err = %v, want %v", err, tc.wantErr)
					}
					for _, p := range []string{filepath.Join(root, "dest", "data.csv"), filepath.Join(root, "data.csv"), "/tmp/data.csv"} {
						if b, err := os.ReadFile(p); err == nil && string(b) == "evil" {
							t.Errorf("traversal wrote %s", p)
						}
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				var rel []string
				for _, p := range written {
					r, _ := filepath.Rel(dest, p)
					rel = append(rel, filepath.ToSlash(r))
				}
				sort.Strings(rel)
				if len(rel) != len(tc.want) {
					t.Fatalf("wrote %v, want %v", rel, tc.want)
				}
				for i := range rel {
					if rel[i] != tc.want[i] {
						t.Fatalf("wrote %v, want %v", rel, tc.want)
					}
				}
			})
		}
	}
}

func TestExtractTarGzSkipsSymlinks(t *testing.T) {
	root := t.TempDir()
	archive := filepath.Join(root, "a.tar.gz")
	b := fetchtest.TarGz(t, [][2]string{{"data.csv", "->/etc/passwd"}, {"labels.csv", "l"}})
	if err := os.WriteFile(archive, b, 0o644); err != nil {
		t.Fatal(err)
	}
	written, err := ExtractTarGz(archive, root, "data.csv", "labels.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 1 || filepath.Base(written[0]) != "labels.csv" {
		t.Errorf("wrote %v, want only labels.csv", written)
	}
	if _, err := MemberDir(written, "data.csv", "labels.csv"); err == nil {
		t.Error("MemberDir found data.csv, which was a symlink")
	}
}
