package paper

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/internal/inputcap"
	"github.com/stabpriv/stabpriv/internal/inputcap/capstest"
)

// TestLoadCaps: a file of the paper's data sets without line ends (a
// sparse 2 GB file) is refused at the line cap of a data CSV, and an
// artist-likes file over its cap from its size.
func TestLoadCaps(t *testing.T) {
	nul := capstest.SparseFile(t, "nul", "", 2<<30)
	link := func(files map[string]string, big string) string {
		dir := writeTestFiles(t, files)
		if err := os.Symlink(nul, filepath.Join(dir, big)); err != nil {
			t.Skipf("no symbolic link here: %v", err)
		}
		return dir
	}
	_, err := LoadTCGA(link(map[string]string{TCGALabelsFile: tcgaSmallLabels}, TCGADataFile), TCGAOptions{})
	if !errors.Is(err, datasets.ErrFormat) || !errors.Is(err, inputcap.ErrCap) || !strings.Contains(err.Error(), "line 1 is longer than 8 MiB") {
		t.Errorf("TCGA data without line ends: %v", err)
	}
	_, err = LoadLastFM(link(map[string]string{LastFMTargetFile: lastfmSmallTarget}, LastFMEdgesFile), LastFMOptions{})
	if !errors.Is(err, datasets.ErrFormat) || !errors.Is(err, inputcap.ErrCap) {
		t.Errorf("LastFM edges without line ends: %v", err)
	}
	_, err = LoadLastFM(link(map[string]string{LastFMTargetFile: lastfmSmallTarget, LastFMEdgesFile: lastfmSmallEdges}, LastFMFeaturesFile), LastFMOptions{})
	if !errors.Is(err, inputcap.ErrCap) || !strings.Contains(err.Error(), "more than the 64 MiB a LastFM artist-likes file may hold") {
		t.Errorf("a 2 GB artist-likes file: %v", err)
	}
}
