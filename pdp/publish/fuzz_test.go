package publish

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// golden is a summary file written by TestGolden's fixture (seeded, so not
// private), the seed of the fuzz target.
var golden = filepath.Join("testdata", "summary.dp.json")

// TestGolden: the summary file of testdata verifies (a file written by an
// earlier version keeps verifying: the format is pinned), and the same
// fixture and seed give a summary that verifies with the same derived
// constants (the draws and bounds are not compared: the minimizer's last
// bits may differ across processors). Regenerate it with
// STABPRIV_UPDATE_GOLDEN=1 go test ./pdp/publish/ -run Golden, after a
// deliberate change of the format (and a new Format).
func TestGolden(t *testing.T) {
	f := newFixture(t, 120, 0.5)
	src, sd := seeded(42)
	s, err := Summarize(f.p, Config{Epsilon: 3, Delta: 1e-6, Levels: []float64{0.05, 0.2, 10}}, src, sd)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("STABPRIV_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Read(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Verify(r); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Verify(s); err != nil {
		t.Fatal(err)
	}
	if r.Derived != s.Derived {
		t.Errorf("derived constants %+v, the golden file's %+v", s.Derived, r.Derived)
	}
}

// FuzzReadSummary: any bytes are read and verified, or refused with an
// error wrapping ErrFile, never a panic; a summary that verifies keeps its
// verdict when written and read again.
func FuzzReadSummary(f *testing.F) {
	if b, err := os.ReadFile(golden); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"format":"` + Format + `"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := Read(bytes.NewReader(in))
		if err != nil {
			return
		}
		private, _, err := Verify(s)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := s.Write(&out); err != nil {
			t.Fatal(err)
		}
		back, err := Read(&out)
		if err != nil {
			t.Fatalf("a verified summary does not read back: %v", err)
		}
		if p2, _, err := Verify(back); err != nil || p2 != private {
			t.Fatalf("verdict %v, after a round trip %v (%v)", private, p2, err)
		}
	})
}
