package publish

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/internal/inputcap"
	"github.com/stabpriv/stabpriv/internal/inputcap/capstest"
)

// TestReadCaps: a summary file over MaxFileBytes is refused, a regular
// file from its size and a stream at the cap.
func TestReadCaps(t *testing.T) {
	big := capstest.SparseFile(t, "big.json", "", 2<<30)
	if _, err := ReadFile(big); !errors.Is(err, ErrFile) || !errors.Is(err, inputcap.ErrCap) || !strings.Contains(err.Error(), "2 GiB, more than the 16 MiB a summary file may hold") {
		t.Errorf("a 2 GiB file: %v", err)
	}
	if _, err := Read(capstest.Endless(" ")); !errors.Is(err, ErrFile) || !strings.Contains(err.Error(), "more than 16 MiB, the most a summary file may hold") {
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
