package modelfile_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/internal/inputcap"
	"github.com/stabpriv/stabpriv/internal/inputcap/capstest"
	"github.com/stabpriv/stabpriv/modelfile"
)

// goldenModel is the golden model file and its values.
type goldenModel struct {
	data []byte
	r    *modelfile.Released
}

// goldenOnce reads the golden model file once (its callers do not change
// the values).
var goldenOnce = sync.OnceValues(func() (goldenModel, error) {
	data, err := os.ReadFile(filepath.Join("testdata", "model.golden.json"))
	if err != nil {
		return goldenModel{}, err
	}
	r, err := modelfile.Read(bytes.NewReader(data))
	return goldenModel{data, r}, err
})

// golden returns the golden model file's bytes and values.
func golden(t testing.TB) ([]byte, *modelfile.Released) {
	t.Helper()
	g, err := goldenOnce()
	if err != nil {
		t.Fatal(err)
	}
	return g.data, g.r
}

// withNames returns the model of the golden file (without its
// certificate and run record, which Read does not need) with its first
// feature, its second class and its label renamed to name.
func withNames(t testing.TB, name string) *modelfile.Released {
	t.Helper()
	_, g := golden(t)
	p := *g.Preprocessing
	p.Features = append([]string{name}, p.Features[1:]...)
	return &modelfile.Released{
		Model:         g.Model,
		Schema:        datasets.Schema{Label: name, Classes: []string{g.Schema.Classes[0], name}},
		Preprocessing: &p,
	}
}

// roundTrip checks that a name CheckName accepts is written and read back
// byte for byte, and that Read refuses a file holding one it refuses.
func roundTrip(t *testing.T, name string) {
	t.Helper()
	r := withNames(t, name)
	var out bytes.Buffer
	if err := r.Write(&out); err != nil {
		t.Fatal(err)
	}
	back, err := modelfile.Read(bytes.NewReader(out.Bytes()))
	if datasets.CheckName(name) != nil {
		if !errors.Is(err, modelfile.ErrFile) {
			t.Errorf("name %q, which train refuses: Read %v, want ErrFile", name, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("name %q: Read %v", name, err)
	}
	// Read checked that the file is what Write writes for the values read.
	if f := back.Preprocessing.Features[0]; f != name || back.Schema.Classes[1] != name || back.Schema.Label != name {
		t.Errorf("name %q read back as %q", name, f)
	}
}

// TestNamesRoundTrip: every name train accepts round-trips through the
// model file, and a file holding a name train refuses does not read.
func TestNamesRoundTrip(t *testing.T) {
	for _, name := range []string{"b\u00e9", "\u5e74\u9f62", "x \U0001F600 y", "<script>&", "a\u2028b\u2029", `q"uo\te`, "a,b",
		"\ufffd", "\ufeffx", "\u202eevil", strings.Repeat("long", 1000),
		"b\xe9", "a\x00", "a\tb", "a\u0085", "\xed\xa0\x80"} {
		roundTrip(t, name)
	}
}

// FuzzNamesRoundTrip is TestNamesRoundTrip for any name (not empty, not
// f1, trimmed: the header rule's other parts).
func FuzzNamesRoundTrip(f *testing.F) {
	for _, s := range []string{"b\u00e9", "b\xe9", "a\x01", "<&>", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if name = strings.TrimSpace(name); name == "" || name == "f1" || name == "0" {
			return
		}
		roundTrip(t, name)
	})
}

// TestReadCaps: a model file beyond MaxFileBytes is refused (a regular
// file from its size, a stream at the cap), and input that does not start
// as a model file at once; Write does not write a file Read refuses.
func TestReadCaps(t *testing.T) {
	dir := t.TempDir()
	sparse := capstest.SparseFile(t, "big.json", "", 2<<30)
	start := time.Now()
	_, err := modelfile.ReadFile(sparse)
	if !errors.Is(err, modelfile.ErrFile) || !errors.Is(err, inputcap.ErrCap) || !strings.Contains(err.Error(), "2 GiB, more than the 160 MiB a model file may hold") {
		t.Errorf("a 2 GiB file: %v", err)
	}
	_, err = modelfile.Read(capstest.Endless("\x00"))
	if !errors.Is(err, modelfile.ErrFile) || !strings.Contains(err.Error(), `not a stabpriv model file: it starts with "\x00\x00`) {
		t.Errorf("/dev/zero: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusing took %v", d)
	}
	for in, want := range map[string]string{"": "it is empty", "{}": `it starts with "{}"`, `{"format":"stabpriv-model/2"}`: `it starts with "{\"format\":`} {
		if _, err := modelfile.Read(strings.NewReader(in)); !errors.Is(err, modelfile.ErrFile) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}

	data, r := golden(t)
	modelfile.SetMaxFileBytes(t, int64(len(data)))
	if _, err := modelfile.Read(bytes.NewReader(data)); err != nil {
		t.Errorf("a file at the cap: %v", err)
	}
	path := filepath.Join(dir, "m.json")
	os.WriteFile(path, data, 0o644)
	if _, err := modelfile.ReadFile(path); err != nil {
		t.Errorf("a file at the cap: %v", err)
	}
	// A stream that starts as a model file and never ends stops at the cap.
	stream := io.MultiReader(bytes.NewReader(data[:40]), capstest.Endless(" "))
	if _, err := modelfile.Read(stream); !errors.Is(err, modelfile.ErrFile) || !errors.Is(err, inputcap.ErrCap) {
		t.Errorf("an endless stream: %v", err)
	}
	modelfile.SetMaxFileBytes(t, int64(len(data))-1)
	if _, err := modelfile.ReadFile(path); !errors.Is(err, inputcap.ErrCap) {
		t.Errorf("a file a byte over the cap: %v", err)
	}
	if err := r.Write(io.Discard); err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("Write of a file over the cap: %v", err)
	}
}

// TestReadWeightLines: a model file whose weights are not k x d lines as
// Write lays them out (a forged array of many weights on one line) is
// refused before it is decoded; the genuine file reads.
func TestReadWeightLines(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "model.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := modelfile.Read(bytes.NewReader(data)); err != nil {
		t.Fatalf("the golden file: %v", err)
	}
	s := string(data)
	i := strings.Index(s, "\"w\": [")
	j := i + strings.Index(s[i:], "]")
	forged := s[:i] + "\"w\": [" + strings.Repeat("0,", 100000) + "0" + s[j:]
	if _, err := modelfile.Read(strings.NewReader(forged)); !errors.Is(err, modelfile.ErrFile) || !strings.Contains(err.Error(), "lines as train writes them") {
		t.Errorf("100,001 weights on one line: %v", err)
	}
}
