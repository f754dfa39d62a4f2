package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadPrecision reads a symmetric positive definite matrix and
// refuses, naming the file and the entry, one that is not square, not
// symmetric, not positive definite or holds a cell that is not a number.
func TestReadPrecision(t *testing.T) {
	for _, tc := range []struct{ text, err string }{
		{"2,0.5\n0.5,1\n", ""},
		{"1,0\n", "row 1 has 2 entries, want 1"},
		{"1,2\n3,1\n", "not symmetric"},
		{"1,2\n2,1\n", "not positive definite"},
		{"1,x\nx,1\n", `row 1, column 2: "x" is not a finite number`},
		{"", "no rows"},
	} {
		path := filepath.Join(t.TempDir(), "a.csv")
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := ReadPrecision(path)
		switch {
		case tc.err == "" && (err != nil || a.SymmetricDim() != 2 || a.At(0, 1) != 0.5):
			t.Errorf("%q: %v, %v", tc.text, a, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), path)):
			t.Errorf("%q: %v, want an error naming %s and containing %q", tc.text, err, path, tc.err)
		}
	}
}
