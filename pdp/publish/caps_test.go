package publish

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/internal/inputcap"
)

// endless reads as an endless run of spaces.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// TestReadCaps: a summary file over MaxFileBytes is refused, a regular
// file from its size and a stream at the cap.
func TestReadCaps(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadFile(big); !errors.Is(err, ErrFile) || !errors.Is(err, inputcap.ErrCap) || !strings.Contains(err.Error(), "2 GiB, more than the 16 MiB a summary file may hold") {
		t.Errorf("a 2 GiB file: %v", err)
	}
	if _, err := Read(endless{}); !errors.Is(err, ErrFile) || !strings.Contains(err.Error(), "more than 16 MiB, the most a summary file may hold") {
		t.Errorf("an endless stream: %v", err)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read(bytes.NewReader(want)); err != nil {
		t.Errorf("the golden file: %v", err)
	}
}
