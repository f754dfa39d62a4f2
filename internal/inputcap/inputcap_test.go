package inputcap

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stabpriv/stabpriv/internal/inputcap/capstest"
)

// readAll reads s through a Reader with caps c, a byte at a time when
// slow (so every line spans reads), and returns what passed and the error.
func readAll(s string, c Caps, slow bool) (string, error) {
	var r io.Reader = strings.NewReader(s)
	if slow {
		r = iotest.OneByteReader(r)
	}
	b, err := io.ReadAll(NewReader(r, c))
	return string(b), err
}

func TestReaderCaps(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct {
		name string
		in   string
		c    Caps
		err  string // "" when the input passes
	}{
		{"bytes at the cap", "abcd", Caps{Bytes: 4}, ""},
		{"a byte over", "abcde", Caps{Bytes: 4}, "more than 4 bytes, the most a t may hold"},
		{"line at the cap", "ab\nabcd\nx", Caps{Line: 4}, ""},
		{"CRLF counts the CR", "abc\r\n", Caps{Line: 4}, ""},
		{"a line over, inside a read", "ab\nabcde\nx", Caps{Line: 4}, "line 2 is longer than 4 bytes"},
		{"the first line over", "abcde\nx", Caps{Line: 4}, "line 1 is longer than 4 bytes"},
		{"the last line over, no line end", "a\nb\nabcde", Caps{Line: 4}, "line 3 is longer than 4 bytes"},
		{"a long line among short ones", "a\n" + long + "\nb\n", Caps{Line: 99}, "line 2 is longer than 99 bytes"},
		{"lines at the cap", "a\nb\nc", Caps{Lines: 3}, ""},
		{"lines at the cap, last ended", "a\nb\nc\n", Caps{Lines: 3}, ""},
		{"a line over", "a\nb\nc\nd", Caps{Lines: 3}, "more than 3 lines, the most a t may hold"},
		{"empty lines count", "\n\n\n\n", Caps{Lines: 3}, "more than 3 lines"},
	}
	for _, tt := range tests {
		for _, slow := range []bool{false, true} {
			tt.c.Kind = "t"
			got, err := readAll(tt.in, tt.c, slow)
			switch {
			case tt.err == "" && (err != nil || got != tt.in):
				t.Errorf("%s (slow %v): %q, %v; want the input", tt.name, slow, got, err)
			case tt.err != "" && (!errors.Is(err, ErrCap) || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("%s (slow %v): error %v, want ErrCap saying %q", tt.name, slow, err, tt.err)
			}
		}
	}
}

// counter counts the bytes read from it, an endless stream of x.
type counter struct{ n int64 }

func (c *counter) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	c.n += int64(len(p))
	return len(p), nil
}

// TestReaderStops: an endless stream is refused at the cap, and no more
// than a byte beyond it is read; the error repeats.
func TestReaderStops(t *testing.T) {
	var src counter
	r := NewReader(&src, Caps{Kind: "t", Bytes: 1000})
	_, err := io.Copy(io.Discard, r)
	if !errors.Is(err, ErrCap) || src.n > 1001 {
		t.Fatalf("error %v after %d bytes read", err, src.n)
	}
	if _, err2 := r.Read(make([]byte, 10)); err2 != err {
		t.Errorf("a read after the error: %v", err2)
	}
	var line counter
	_, err = io.Copy(io.Discard, NewReader(&line, Caps{Kind: "t", Line: 1 << 20}))
	if !errors.Is(err, ErrCap) || line.n > 2<<20 {
		t.Fatalf("line cap: error %v after %d bytes read", err, line.n)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	c := Caps{Kind: "bounds file", Bytes: 1 << 20}
	if _, err := Open(dir, c); err == nil || !strings.Contains(err.Error(), "is a directory, not a bounds file") {
		t.Errorf("a directory: %v", err)
	}
	big := capstest.SparseFile(t, "big", "", 2<<30)
	_, err := Open(big, c)
	if !errors.Is(err, ErrCap) || !strings.Contains(err.Error(), big+": 2 GiB, more than the 1 MiB a bounds file may hold") {
		t.Errorf("a 2 GiB file: %v", err)
	}
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("a,0,1\n"), 0o644)
	f, err := Open(small, c)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Open(filepath.Join(dir, "none"), c); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestReadAll(t *testing.T) {
	c := Caps{Kind: "model file", Bytes: 3 << 20}
	want := bytes.Repeat([]byte("0123456789abcdef"), (2<<20+5)/16)
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, want, 0o644)
	f, _ := os.Open(path)
	defer f.Close()
	for name, r := range map[string]io.Reader{"file": f, "stream": bytes.NewBuffer(want), "slow": iotest.HalfReader(bytes.NewReader(want))} {
		got, err := ReadAll(r, c)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v; want %d", name, len(got), err, len(want))
		}
	}
	small := Caps{Kind: "model file", Bytes: 1 << 20}
	f.Seek(0, io.SeekStart)
	if _, err := ReadAll(f, small); !errors.Is(err, ErrCap) || !strings.Contains(err.Error(), "2 MiB, more than the 1 MiB a model file may hold") {
		t.Errorf("a file over the cap: %v", err)
	}
	if _, err := ReadAll(bytes.NewReader(want), small); !errors.Is(err, ErrCap) || !strings.Contains(err.Error(), "more than 1 MiB, the most a model file may hold") {
		t.Errorf("a stream over the cap: %v", err)
	}
	// An endless stream is held up to the cap only.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadAll(&counter{}, Caps{Kind: "t", Bytes: 16 << 20})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCap) {
		t.Fatalf("an endless stream: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 20<<20 {
		t.Errorf("an endless stream refused at 16 MiB allocated %s", Size(int64(alloc)))
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1023: "1023 bytes", 1024: "1 KiB", 1536: "1.5 KiB", 64 << 20: "64 MiB", 2 << 30: "2 GiB", 2<<30 + 1<<29: "2.5 GiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
