package datasets

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stabpriv/stabpriv/internal/inputcap"
	"github.com/stabpriv/stabpriv/internal/inputcap/capstest"
)

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"age", "b\u00e9", "\u5e74\u9f62", "x \U0001F600", "a,b", "\"q\"", "<&>", "\u2028", "\ufffd", strings.Repeat("n", 1000)} {
		if err := CheckName(ok); err != nil {
			t.Errorf("CheckName(%q): %v", ok, err)
		}
	}
	for name, want := range map[string]string{
		"b\xe9":                          `"b\xe9" is not UTF-8 (byte 2 is 0xe9)`,
		"\xff":                           "byte 1 is 0xff",
		"a\tb":                           "control character U+0009 at byte 2",
		"a\x00":                          "U+0000",
		"a\u0085":                        "U+0085",
		"x\x7f":                          "U+007F",
		"txt.exe\u202egpj":               "bidirectional control character U+202E at byte 8",
		"a\u2066b":                       "U+2066",
		strings.Repeat("z", 70) + "\x01": "... (71 bytes) holds the control character U+0001 at byte 71",
	} {
		if err := CheckName(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckName(%q) = %v, want %q", name, err, want)
		}
	}
}

// TestHeaderNames: a header name a model file cannot hold is refused,
// naming the column, on both paths; so are more than MaxColumns columns,
// before the names are split.
func TestHeaderNames(t *testing.T) {
	for in, want := range map[string]string{
		"a,b\xe9,label\n1,2,x\n":                            `line 1, column 2: the header's name "b\xe9" is not UTF-8 (byte 2 is 0xe9): save the file as UTF-8`,
		"a,\"b\xe9\",label\n1,2,x\n":                        "line 1, column 2: the header's name",
		"a,\"x\ry\",label\n1,2,x\n":                         "line 1, column 2: the header's name \"x\\ry\" holds the control character U+000D",
		"a,b\x1b[31m,label\n1,2,x\n":                        "U+001B",
		strings.Repeat("c,", MaxColumns) + "y\n":            "more than the 131072 columns a data CSV may have",
		"\"c\"," + strings.Repeat("c,", MaxColumns) + "y\n": "line 1: a header of 131074 columns, more than the 131072 a data CSV may have",
	} {
		_, err := ReadTable(strings.NewReader(in), "t")
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: %v, want ErrFormat saying %q", in, err, want)
		}
	}
	wide := strings.Repeat("c,", MaxColumns-1)
	cols := strings.Split(wide+"y", ",")
	for j := range cols {
		cols[j] += strings.Repeat("x", j%7) + string(rune('a'+j%26))
	}
	if _, err := NewTableReader(strings.NewReader(strings.Join(cols, ",")+"\n"), "t"); err == nil || !strings.Contains(err.Error(), "are both named") {
		t.Errorf("MaxColumns columns are refused for another reason: %v", err)
	}
	if _, err := ReadTable(strings.NewReader("b\u00e9,\u5e74,y\n1,2,x\n"), "t"); err != nil {
		t.Errorf("a UTF-8 header: %v", err)
	}
	if _, err := NewTableReaderHeader(strings.NewReader("1,2\n"), "t", []string{"a", "b\xe9"}); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "column 2") {
		t.Errorf("--header with a Latin-1 name: %v", err)
	}
}

// TestUnclosedQuote: a quoted cell that never closes, over short lines,
// is refused once its record passes MaxLineBytes, in bounded memory.
func TestUnclosedQuote(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := io.MultiReader(strings.NewReader("a,b\n1,\"x"), io.LimitReader(capstest.Endless("\n"), 4*MaxLineBytes))
	_, err := ReadTable(r, "quote")
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "is a quote not closed?") {
		t.Fatalf("an unclosed quote: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 6*MaxLineBytes {
		t.Errorf("refusing it allocated %s", inputcap.Size(int64(alloc)))
	}
	// A record of quoted cells under the cap reads.
	cell := strings.Repeat("v\n", (MaxLineBytes-100)/2)
	if _, err := ReadTable(strings.NewReader("a,b\n\"1\",\""+cell+"\"\n"), "quote"); err != nil {
		t.Errorf("a record under the cap: %v", err)
	}
}

// smallInputs are the readers of the small inputs with their files and
// caps.
var smallInputs = []struct {
	kind  string
	read  func(io.Reader) error
	file  func(string) error
	bytes int64
	line  int64
	valid string
}{
	{"bounds file", func(r io.Reader) error { _, err := ReadBounds(r); return err },
		func(p string) error { _, err := ReadBoundsFile(p); return err }, MaxBoundsBytes, MaxBoundsLineBytes, "a,0,1\n"},
	{"schema file", func(r io.Reader) error { _, err := ReadCategories(r); return err },
		func(p string) error { _, err := ReadCategoriesFile(p); return err }, MaxSchemaBytes, MaxSchemaLineBytes, "a,x,y\n"},
}

// TestSmallInputCaps: a bounds or schema file beyond its caps is refused,
// a regular file from its size, a stream at the cap, fast and in bounded
// memory, with an error that names the cap.
func TestSmallInputCaps(t *testing.T) {
	dir := t.TempDir()
	sparse := capstest.SparseFile(t, "sparse", "", 2<<30)
	for _, in := range smallInputs {
		start := time.Now()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := in.file(sparse)
		if !errors.Is(err, ErrSchema) || !errors.Is(err, inputcap.ErrCap) || !strings.Contains(err.Error(), "2 GiB, more than the 16 MiB a "+in.kind+" may hold") {
			t.Errorf("%s: a 2 GiB file: %v", in.kind, err)
		}
		for what, r := range map[string]io.Reader{
			"no line end": zeros{},
			"many lines":  strings.NewReader(strings.Repeat("#\n", 1<<20+1)),
			"many bytes":  io.MultiReader(strings.NewReader(in.valid), capstest.Endless("\n")),
			"a long line": strings.NewReader(in.valid + strings.Repeat("y", int(in.line)+1) + "\n"),
		} {
			err := in.read(r)
			if !errors.Is(err, ErrSchema) || !errors.Is(err, inputcap.ErrCap) {
				t.Errorf("%s, %s: %v, want a cap named", in.kind, what, err)
			}
		}
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 200<<20 {
			t.Errorf("%s: refusing the inputs allocated %s", in.kind, inputcap.Size(int64(alloc)))
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s: refusing the inputs took %v", in.kind, d)
		}
		if err := in.read(strings.NewReader(in.valid)); err != nil {
			t.Errorf("%s: %q: %v", in.kind, in.valid, err)
		}
		if _, err := os.Stat(dir); err == nil {
			if err := in.file(dir); err == nil || !strings.Contains(err.Error(), "is a directory, not a "+in.kind) {
				t.Errorf("%s: a directory: %v", in.kind, err)
			}
		}
	}
}

// TestSchemaNames: the bounds and schema files, the classes and the label
// follow the rule of names.
func TestSchemaNames(t *testing.T) {
	if _, err := ReadBounds(strings.NewReader("b\xe9,0,1\n")); !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "bounded column \"b\\xe9\" is not UTF-8") {
		t.Errorf("a Latin-1 bounds column: %v", err)
	}
	if _, err := ReadCategories(strings.NewReader("a,x,b\xe9\n")); !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "category \"b\\xe9\" is not UTF-8") {
		t.Errorf("a Latin-1 category: %v", err)
	}
	if _, err := ReadCategories(strings.NewReader("\"a\x01\",x\n")); !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "categorical column \"a\\x01\" holds the control character") {
		t.Errorf("a control character in a column: %v", err)
	}
	s := Schema{Label: "y", Classes: []string{"a", "b\xe9"}}
	if err := s.Validate(0); !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "class name \"b\\xe9\" is not UTF-8") {
		t.Errorf("a Latin-1 class: %v", err)
	}
}

// FuzzTableHeader: the header of any input, and any names given for a
// file without a header, are read or refused with an error wrapping
// ErrFormat, never a panic; names that read are at most MaxColumns,
// trimmed, non-empty, distinct, and names a model file holds (CheckName).
func FuzzTableHeader(f *testing.F) {
	for _, s := range []string{"a,b,y\n1,2,x\n", "\ufeff a , b \n", "a,b\xe9\n", "\"a\nb\",c\n", "a,\"b\x01\"\n", "a,a\n", ",\n", "\"a,b\",\"c\"\"d\"\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		tr, err := NewTableReader(strings.NewReader(in), "fuzz")
		checkNames(t, tr, err)
		tr, err = NewTableReaderHeader(strings.NewReader("1\n"), "fuzz", strings.Split(in, ","))
		checkNames(t, tr, err)
	})
}

// checkNames checks the header a TableReader read, or its error.
func checkNames(t *testing.T, tr *TableReader, err error) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, ErrFormat) {
			t.Fatalf("error %v does not wrap ErrFormat", err)
		}
		return
	}
	cols := tr.Columns()
	seen := map[string]bool{}
	if len(cols) == 0 || len(cols) > MaxColumns {
		t.Fatalf("%d columns read", len(cols))
	}
	for _, c := range cols {
		if c == "" || strings.TrimSpace(c) != c || seen[c] || CheckName(c) != nil {
			t.Fatalf("column name %q read (%v)", c, CheckName(c))
		}
		seen[c] = true
	}
}

// TestReadTableFileHeaderRepeated: names given for a file without a header
// row, whose first line repeats them, is a file with a header row: refused
// naming line 1, not read as a data row of text cells.
func TestReadTableFileHeaderRepeated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.csv")
	if err := os.WriteFile(path, []byte("a,b,y\n1,2,x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTableFileHeader(path, []string{"a", " b", "y"}); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "line 1: the first line repeats the given column names") {
		t.Errorf("a header row read with names: %v", err)
	}
	if tb, err := ReadTableFileHeader(path, []string{"a", "b", "z"}); err != nil || tb.Len() != 2 {
		t.Errorf("a first line that differs from the names: %v, want 2 data rows", err)
	}
}
