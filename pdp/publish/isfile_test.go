package publish

import (
	"os"
	"path/filepath"
	"testing"
)

// TestIsSummaryFile tells a file that begins like a summary from a model
// file, a directory and a missing path.
func TestIsSummaryFile(t *testing.T) {
	dir := t.TempDir()
	summary, model := filepath.Join(dir, "summary.dp.json"), filepath.Join(dir, "model.json")
	if err := os.WriteFile(summary, []byte("{\n  \"format\": \""+Format+"\",\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, []byte(`{"format":"stabpriv-model/1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{summary: true, model: false, dir: false, filepath.Join(dir, "missing"): false} {
		if got := IsSummaryFile(path); got != want {
			t.Errorf("IsSummaryFile(%s) = %v, want %v", path, got, want)
		}
	}
}
