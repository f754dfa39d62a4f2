// Package capstest helps the tests of the input caps (internal/inputcap):
// sparse files of any size, which take no disk, and endless streams.
package capstest

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// SparseFile writes head at the start of a new file name in a temporary
// directory of t, of size bytes whose rest is a hole (zero bytes that take
// no disk), and returns its path. It skips t where the file system has no
// sparse files.
func SparseFile(t testing.TB, name, head string, size int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Skipf("no sparse file here: %v", err)
	}
	return path
}

// Endless returns a reader of s (not empty) repeated without end.
func Endless(s string) io.Reader { return &endless{s: s} }

type endless struct {
	s   string
	off int
}

func (r *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.s[r.off:])
		n += c
		r.off = (r.off + c) % len(r.s)
	}
	return n, nil
}
