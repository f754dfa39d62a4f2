package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPaper runs the reduced Figure 1 sweep on the embedded breast-cancer
// data (no data directory) and checks the table and the files it writes.
func TestPaper(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(context.Background(), "", dir, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"breast-cancer, 3 splits", "non-private", "releases in"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	for _, f := range []string{"results.csv", "summary.json", "fig1.png", "fig2.png"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}
