package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/cmd/runflags"
)

// TestWriteRefusalIsUsage checks that Write without force refuses a file
// that exists (one another run wrote meanwhile) and leaves it as it was,
// that Error makes the refusal a usage error naming the flag and what to
// do, and that with force the file is replaced.
func TestWriteRefusalIsUsage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.csv")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }
	err := Error("--out", Write(path, false, write))
	var ue *runflags.UsageError
	if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "--out: ") || !strings.Contains(err.Error(), "give a new path, or --force to replace it") {
		t.Errorf("an existing file without --force: %v, want a usage error naming --out and --force", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("the refused write changed the file: %q", b)
	}
	if err := Error("--out", Write(path, true, write)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("with force the file is %q, want new", b)
	}
	other := errors.New("disk full")
	if got := Error("--out", other); got != other {
		t.Errorf("Error changed an error that is not a refusal: %v", got)
	}
}
