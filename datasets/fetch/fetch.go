package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/stabpriv/stabpriv/datasets/internal/dataerr"
)

// Errors of the download path.
var (
	// ErrChecksum is returned when downloaded bytes do not have the expected
	// SHA-256; no file is left behind. It wraps datasets.ErrFormat.
	ErrChecksum = fmt.Errorf("%w: SHA-256 mismatch", dataerr.ErrFormat)
	// ErrNoChecksum is returned when a fetch has no expected SHA-256: every
	// download is verified, so the caller must supply one. It wraps
	// datasets.ErrInvalid.
	ErrNoChecksum = fmt.Errorf("%w: no SHA-256 to verify the download against", dataerr.ErrInvalid)
	// ErrUnsafePath is returned for an archive member whose name would be
	// written outside the destination directory. It wraps datasets.ErrFormat.
	ErrUnsafePath = fmt.Errorf("%w: unsafe path in archive", dataerr.ErrFormat)
	// ErrConfig is returned for an invalid Config. It wraps
	// datasets.ErrInvalid.
	ErrConfig = fmt.Errorf("%w: fetch configuration", dataerr.ErrInvalid)
)

// HTTPStatusError reports a download answered with a status other than 200.
type HTTPStatusError struct {
	URL        string
	StatusCode int
	Status     string
}

func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("fetch: GET %s: %s", e.URL, e.Status)
}

// DefaultMaxBytes bounds a download when Config.MaxBytes is zero.
const DefaultMaxBytes = 4 << 30

// Config configures Fetch.
type Config struct {
	// URL is the file to download. Required.
	URL string
	// SHA256 is the expected hex SHA-256 of the file. Required: Fetch never
	// trusts unverified bytes.
	SHA256 string
	// CacheDir is the directory the file is kept in; it is created if needed.
	// Required.
	CacheDir string
	// FileName is the name of the file in CacheDir. Empty means the last
	// element of the URL's path. It must be a plain file name.
	FileName string
	// Client does the request. Nil means http.DefaultClient.
	Client *http.Client
	// MaxBytes bounds the download size. Zero means DefaultMaxBytes.
	MaxBytes int64
}

// Fetch returns the path of a verified local copy of cfg.URL in
// cfg.CacheDir. When the cached file exists with the expected SHA-256 it is
// returned without a request. Otherwise the file is downloaded (the request
// honours ctx) into a temporary file in CacheDir, its SHA-256 is checked,
// and it is renamed into place atomically, replacing a cached copy with the
// wrong content (which is left untouched when the download fails: Fetch
// never returns the path of unverified bytes). On any error (HTTP status other than 200, wrapped in
// *HTTPStatusError; a checksum mismatch, ErrChecksum; a cancelled context)
// no new file is left behind.
func File(ctx context.Context, cfg Config) (string, error) {
	want, err := checkConfig(&cfg)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(cfg.CacheDir, cfg.FileName)
	if got, err := FileSHA256(dst); err == nil && got == want {
		return dst, nil
	}
	if err := os.MkdirAll(cfg.CacheDir, 0o755); err != nil {
		return "", fmt.Errorf("fetch: fetch: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.URL, nil)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrConfig, err)
	}
	client := cfg.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("fetch: fetch %s: %w", cfg.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", &HTTPStatusError{URL: cfg.URL, StatusCode: resp.StatusCode, Status: resp.Status}
	}
	h := sha256.New()
	err = writeFileAtomic(dst, func(w io.Writer) error {
		n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(resp.Body, cfg.MaxBytes+1))
		if err != nil {
			return fmt.Errorf("fetch: fetch %s: %w", cfg.URL, err)
		}
		if n > cfg.MaxBytes {
			return fmt.Errorf("fetch: fetch %s: larger than %d bytes", cfg.URL, cfg.MaxBytes)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			return fmt.Errorf("%w: %s: got %s, want %s", ErrChecksum, cfg.URL, got, want)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return dst, nil
}

// checkConfig validates cfg, fills its defaults and returns the
// normalized expected checksum.
func checkConfig(cfg *Config) (string, error) {
	if cfg.SHA256 == "" {
		return "", ErrNoChecksum
	}
	want := strings.ToLower(strings.TrimSpace(cfg.SHA256))
	if b, err := hex.DecodeString(want); err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("%w: SHA256 %q is not 64 hex digits", ErrConfig, cfg.SHA256)
	}
	if cfg.CacheDir == "" {
		return "", fmt.Errorf("%w: empty CacheDir", ErrConfig)
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("%w: URL %q is not http(s)", ErrConfig, cfg.URL)
	}
	if cfg.FileName == "" {
		cfg.FileName = path.Base(u.Path)
	}
	if !isPlainFileName(cfg.FileName) {
		return "", fmt.Errorf("%w: file name %q", ErrConfig, cfg.FileName)
	}
	if cfg.MaxBytes < 0 {
		return "", fmt.Errorf("%w: MaxBytes = %d", ErrConfig, cfg.MaxBytes)
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	return want, nil
}

func isPlainFileName(name string) bool {
	return name != "" && name != "." && name != ".." && filepath.IsLocal(name) &&
		!strings.ContainsAny(name, `/\`)
}

// FileSHA256 returns the hex SHA-256 of a file.
func FileSHA256(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeFileAtomic writes dst through write into a temporary file in dst's
// directory and renames it into place only if write succeeds; otherwise the
// temporary file is removed.
func writeFileAtomic(dst string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".part-*")
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	if err = os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	return nil
}

// Source is a canonical online source of a data set file.
type Source struct {
	// Name identifies the source.
	Name string
	// URL is where the file is downloaded from.
	URL string
	// SHA256 is the expected hex SHA-256, or empty when no sum is recorded:
	// then the caller must supply one (Fetch refuses unverified downloads).
	SHA256 string
}

// Fetch downloads the source into cacheDir (see Fetch); sum, a hex SHA-256,
// overrides the recorded sum when not empty and is required when none is
// recorded.
func (s Source) Fetch(ctx context.Context, cacheDir, sum string, client *http.Client) (string, error) {
	if sum == "" {
		sum = s.SHA256
	}
	return File(ctx, Config{URL: s.URL, SHA256: sum, CacheDir: cacheDir, FileName: s.Name, Client: client})
}
