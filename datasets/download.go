package datasets

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Errors of the download path.
var (
	// ErrChecksum is returned when downloaded bytes do not have the expected
	// SHA-256; no file is left behind. It wraps ErrFormat.
	ErrChecksum = fmt.Errorf("%w: SHA-256 mismatch", ErrFormat)
	// ErrNoChecksum is returned when a fetch has no expected SHA-256: every
	// download is verified, so the caller must supply one. It wraps
	// ErrInvalid.
	ErrNoChecksum = fmt.Errorf("%w: no SHA-256 to verify the download against", ErrInvalid)
	// ErrUnsafePath is returned for an archive member whose name would be
	// written outside the destination directory. It wraps ErrFormat.
	ErrUnsafePath = fmt.Errorf("%w: unsafe path in archive", ErrFormat)
	// ErrFetchConfig is returned for an invalid FetchConfig. It wraps
	// ErrInvalid.
	ErrFetchConfig = fmt.Errorf("%w: fetch configuration", ErrInvalid)
)

// HTTPStatusError reports a download answered with a status other than 200.
type HTTPStatusError struct {
	URL        string
	StatusCode int
	Status     string
}

func (e *HTTPStatusError) Error() string {
	return fmt.Sprintf("datasets: GET %s: %s", e.URL, e.Status)
}

// DefaultFetchMaxBytes bounds a download when FetchConfig.MaxBytes is zero.
const DefaultFetchMaxBytes = 4 << 30

// FetchConfig configures Fetch.
type FetchConfig struct {
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
	// MaxBytes bounds the download size. Zero means DefaultFetchMaxBytes.
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
func Fetch(ctx context.Context, cfg FetchConfig) (string, error) {
	want, err := checkFetchConfig(&cfg)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(cfg.CacheDir, cfg.FileName)
	if got, err := fileSHA256(dst); err == nil && got == want {
		return dst, nil
	}
	if err := os.MkdirAll(cfg.CacheDir, 0o755); err != nil {
		return "", fmt.Errorf("datasets: fetch: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.URL, nil)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrFetchConfig, err)
	}
	client := cfg.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("datasets: fetch %s: %w", cfg.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", &HTTPStatusError{URL: cfg.URL, StatusCode: resp.StatusCode, Status: resp.Status}
	}
	h := sha256.New()
	err = writeFileAtomic(dst, func(w io.Writer) error {
		n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(resp.Body, cfg.MaxBytes+1))
		if err != nil {
			return fmt.Errorf("datasets: fetch %s: %w", cfg.URL, err)
		}
		if n > cfg.MaxBytes {
			return fmt.Errorf("datasets: fetch %s: larger than %d bytes", cfg.URL, cfg.MaxBytes)
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

// checkFetchConfig validates cfg, fills its defaults and returns the
// normalized expected checksum.
func checkFetchConfig(cfg *FetchConfig) (string, error) {
	if cfg.SHA256 == "" {
		return "", ErrNoChecksum
	}
	want := strings.ToLower(strings.TrimSpace(cfg.SHA256))
	if b, err := hex.DecodeString(want); err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("%w: SHA256 %q is not 64 hex digits", ErrFetchConfig, cfg.SHA256)
	}
	if cfg.CacheDir == "" {
		return "", fmt.Errorf("%w: empty CacheDir", ErrFetchConfig)
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("%w: URL %q is not http(s)", ErrFetchConfig, cfg.URL)
	}
	if cfg.FileName == "" {
		cfg.FileName = path.Base(u.Path)
	}
	if !isPlainFileName(cfg.FileName) {
		return "", fmt.Errorf("%w: file name %q", ErrFetchConfig, cfg.FileName)
	}
	if cfg.MaxBytes < 0 {
		return "", fmt.Errorf("%w: MaxBytes = %d", ErrFetchConfig, cfg.MaxBytes)
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultFetchMaxBytes
	}
	return want, nil
}

func isPlainFileName(name string) bool {
	return name != "" && name != "." && name != ".." && filepath.IsLocal(name) &&
		!strings.ContainsAny(name, `/\`)
}

// fileSHA256 returns the hex SHA-256 of a file.
func fileSHA256(name string) (string, error) {
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
		return fmt.Errorf("datasets: %w", err)
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
		return fmt.Errorf("datasets: %w", err)
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("datasets: %w", err)
	}
	if err = os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("datasets: %w", err)
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

// The canonical sources of the real data sets.
var (
	// AdultDataSource is UCI Adult's training file (32,561 records).
	AdultDataSource = Source{
		Name:   "adult.data",
		URL:    "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.data",
		SHA256: "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
	}
	// AdultTestSource is UCI Adult's test file (16,281 records).
	AdultTestSource = Source{
		Name:   "adult.test",
		URL:    "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.test",
		SHA256: "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
	}
	// LastFMSource is SNAP's LastFM Asia archive (edges, target and the
	// artist-likes JSON). No SHA-256 of the archive is recorded here: pass
	// one to FetchLastFM (the sums of the extracted edges and target files
	// are LastFMEdgesSHA256 and LastFMTargetSHA256).
	LastFMSource = Source{
		Name: "lastfm_asia.zip",
		URL:  "https://snap.stanford.edu/data/lastfm_asia.zip",
	}
	// TCGASource is UCI's "gene expression cancer RNA-Seq" archive (TCGA
	// PANCAN, 801 x 20,531, data.csv and labels.csv).
	TCGASource = Source{
		Name:   "TCGA-PANCAN-HiSeq-801x20531.tar.gz",
		URL:    "https://archive.ics.uci.edu/ml/machine-learning-databases/00401/TCGA-PANCAN-HiSeq-801x20531.tar.gz",
		SHA256: "e6ea3628f9656efa2d7cf382bf5a403e2cc214df3d90312b1928f5650b43a559",
	}
)

// SHA-256 sums of the extracted LastFM Asia files.
const (
	LastFMEdgesSHA256  = "548eacff61bff564ab5007831fa4a7a30e1a3956075ffd24e43310ed33555842"
	LastFMTargetSHA256 = "91f19215f6eca8321feec038bd32900cf13fd4f7e041a9976cf202807c72ac16"
)

// Sources lists the canonical sources.
func Sources() []Source {
	return []Source{AdultDataSource, AdultTestSource, LastFMSource, TCGASource}
}

// Fetch downloads the source into cacheDir (see Fetch); sum, a hex SHA-256,
// overrides the recorded sum when not empty and is required when none is
// recorded.
func (s Source) Fetch(ctx context.Context, cacheDir, sum string, client *http.Client) (string, error) {
	if sum == "" {
		sum = s.SHA256
	}
	return Fetch(ctx, FetchConfig{URL: s.URL, SHA256: sum, CacheDir: cacheDir, FileName: s.Name, Client: client})
}

// FetchAdult downloads adult.data and adult.test (verified against their
// recorded SHA-256) into dir, ready for LoadAdult(dir, ...).
func FetchAdult(ctx context.Context, dir string, client *http.Client) error {
	for _, s := range []Source{AdultDataSource, AdultTestSource} {
		if _, err := s.Fetch(ctx, dir, "", client); err != nil {
			return err
		}
	}
	return nil
}

// FetchLastFM downloads the SNAP LastFM Asia archive into cacheDir, verified
// against zipSHA256 (required: no sum of the archive is recorded), extracts
// its edges, target and artist-likes files, and returns the directory that
// holds them, ready for LoadLastFM.
func FetchLastFM(ctx context.Context, cacheDir, zipSHA256 string, client *http.Client) (string, error) {
	if zipSHA256 == "" {
		return "", fmt.Errorf("%w: FetchLastFM needs the archive's SHA-256", ErrNoChecksum)
	}
	archive, err := LastFMSource.Fetch(ctx, cacheDir, zipSHA256, client)
	if err != nil {
		return "", err
	}
	written, err := ExtractZip(archive, cacheDir, LastFMEdgesFile, LastFMTargetFile, LastFMFeaturesFile)
	if err != nil {
		return "", err
	}
	return memberDir(written, LastFMEdgesFile, LastFMTargetFile)
}

// FetchTCGA downloads UCI's TCGA PANCAN archive into cacheDir (verified
// against its recorded SHA-256), extracts data.csv and labels.csv, and
// returns the directory that holds them, ready for LoadTCGA.
func FetchTCGA(ctx context.Context, cacheDir string, client *http.Client) (string, error) {
	archive, err := TCGASource.Fetch(ctx, cacheDir, "", client)
	if err != nil {
		return "", err
	}
	written, err := ExtractTarGz(archive, cacheDir, TCGADataFile, TCGALabelsFile)
	if err != nil {
		return "", err
	}
	return memberDir(written, TCGADataFile, TCGALabelsFile)
}

// memberDir returns the directory holding all the named files among the
// written paths.
func memberDir(written []string, names ...string) (string, error) {
	dirs := make(map[string]int)
	for _, p := range written {
		for _, n := range names {
			if filepath.Base(p) == n {
				dirs[filepath.Dir(p)]++
			}
		}
	}
	for d, c := range dirs {
		if c == len(names) {
			return d, nil
		}
	}
	return "", fmt.Errorf("datasets: archive lacks %s in one directory", strings.Join(names, ", "))
}

// extractMaxBytes bounds the size of one extracted member.
const extractMaxBytes = 16 << 30

// ExtractZip extracts from a zip archive the regular files whose base name
// is among names (every regular file when names is empty) into destDir,
// keeping their paths relative to the archive root. A selected member whose
// name is not a local path (absolute, with "..", or a volume name) is an
// error wrapping ErrUnsafePath and nothing more is written; directories,
// symlinks and other special members are skipped. Each file is written
// atomically. It returns the paths written.
func ExtractZip(archive, destDir string, names ...string) ([]string, error) {
	zr, err := zip.OpenReader(archive)
	if errors.Is(err, zip.ErrInsecurePath) && zr != nil {
		// Reported under GODEBUG=zipinsecurepath=0 with a usable reader: the
		// members are checked one by one below, as in the default mode.
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", archive, err)
	}
	defer zr.Close()
	var written []string
	for _, f := range zr.File {
		if !f.Mode().IsRegular() || !wantMember(f.Name, names) {
			continue
		}
		dst, err := memberPath(destDir, f.Name)
		if err != nil {
			return written, err
		}
		rc, err := f.Open()
		if err != nil {
			return written, fmt.Errorf("datasets: %s: %s: %w", archive, f.Name, err)
		}
		err = extractTo(dst, rc)
		rc.Close()
		if err != nil {
			return written, fmt.Errorf("datasets: %s: %s: %w", archive, f.Name, err)
		}
		written = append(written, dst)
	}
	return written, nil
}

// ExtractTarGz is ExtractZip for a gzip-compressed tar archive; only
// regular-file members are extracted.
func ExtractTarGz(archive, destDir string, names ...string) ([]string, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", archive, err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	var written []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return written, nil
		}
		if err != nil {
			return written, fmt.Errorf("datasets: %s: %w", archive, err)
		}
		if hdr.Typeflag != tar.TypeReg || !wantMember(hdr.Name, names) {
			continue
		}
		dst, err := memberPath(destDir, hdr.Name)
		if err != nil {
			return written, err
		}
		if err := extractTo(dst, tr); err != nil {
			return written, fmt.Errorf("datasets: %s: %s: %w", archive, hdr.Name, err)
		}
		written = append(written, dst)
	}
}

// wantMember reports whether the member's base name is selected.
func wantMember(name string, names []string) bool {
	if len(names) == 0 {
		return true
	}
	base := path.Base(strings.ReplaceAll(name, `\`, "/"))
	for _, n := range names {
		if base == n {
			return true
		}
	}
	return false
}

// memberPath returns where the member is written under destDir, or an error
// wrapping ErrUnsafePath when its name is not a local relative path.
func memberPath(destDir, name string) (string, error) {
	if strings.Contains(name, `\`) {
		return "", fmt.Errorf("%w: %q", ErrUnsafePath, name)
	}
	local := filepath.FromSlash(path.Clean(name))
	if !filepath.IsLocal(local) {
		return "", fmt.Errorf("%w: %q", ErrUnsafePath, name)
	}
	return filepath.Join(destDir, local), nil
}

// extractTo writes r to dst atomically, creating dst's directory.
func extractTo(dst string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return writeFileAtomic(dst, func(w io.Writer) error {
		n, err := io.Copy(w, io.LimitReader(r, extractMaxBytes+1))
		if err != nil {
			return err
		}
		if n > extractMaxBytes {
			return fmt.Errorf("member larger than %d bytes", int64(extractMaxBytes))
		}
		return nil
	})
}
