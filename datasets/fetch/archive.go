package fetch

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// MemberDir returns the directory holding all the named files among the
// written paths.
func MemberDir(written []string, names ...string) (string, error) {
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
	return "", fmt.Errorf("fetch: archive lacks %s in one directory", strings.Join(names, ", "))
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
		return nil, fmt.Errorf("fetch: %s: %w", archive, err)
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
			return written, fmt.Errorf("fetch: %s: %s: %w", archive, f.Name, err)
		}
		err = extractTo(dst, rc)
		rc.Close()
		if err != nil {
			return written, fmt.Errorf("fetch: %s: %s: %w", archive, f.Name, err)
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
		return nil, fmt.Errorf("fetch: %w", err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("fetch: %s: %w", archive, err)
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
			return written, fmt.Errorf("fetch: %s: %w", archive, err)
		}
		if hdr.Typeflag != tar.TypeReg || !wantMember(hdr.Name, names) {
			continue
		}
		dst, err := memberPath(destDir, hdr.Name)
		if err != nil {
			return written, err
		}
		if err := extractTo(dst, tr); err != nil {
			return written, fmt.Errorf("fetch: %s: %s: %w", archive, hdr.Name, err)
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
