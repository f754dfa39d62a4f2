package datasets

import (
	"context"
	"fmt"
	"net/http"

	"github.com/stabpriv/stabpriv/datasets/fetch"
)

// The canonical sources of the real data sets.
var (
	// AdultDataSource is UCI Adult's training file (32,561 records).
	AdultDataSource = fetch.Source{
		Name:   "adult.data",
		URL:    "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.data",
		SHA256: "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
	}
	// AdultTestSource is UCI Adult's test file (16,281 records).
	AdultTestSource = fetch.Source{
		Name:   "adult.test",
		URL:    "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.test",
		SHA256: "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
	}
	// LastFMSource is SNAP's LastFM Asia archive (edges, target and the
	// artist-likes JSON). No SHA-256 of the archive is recorded here: pass
	// one to FetchLastFM (the sums of the extracted edges and target files
	// are LastFMEdgesSHA256 and LastFMTargetSHA256).
	LastFMSource = fetch.Source{
		Name: "lastfm_asia.zip",
		URL:  "https://snap.stanford.edu/data/lastfm_asia.zip",
	}
	// TCGASource is UCI's "gene expression cancer RNA-Seq" archive (TCGA
	// PANCAN, 801 x 20,531, data.csv and labels.csv).
	TCGASource = fetch.Source{
		Name:   "TCGA-PANCAN-HiSeq-801x20531.tar.gz",
		URL:    "https://archive.ics.uci.edu/ml/machine-learning-databases/00401/TCGA-PANCAN-HiSeq-801x20531.tar.gz",
		SHA256: "e6ea3628f9656efa2d7cf382bf5a403e2cc214df3d90312b1928f5650b43a559",
	}
)

// SHA-256 sums of the extracted LastFM Asia files.
const (
	LastFMEdgesSHA256  = "548eacff61bff564ab5007831fa4a7a30e1a3956075ffd24e43310ed33555842"
	LastFMTargetSHA256 = "91f19215f6eca8321feec038bd32900cf13fd4f7e041a9976cf202807c72ac16"
)

// Sources lists the canonical sources.
func Sources() []fetch.Source {
	return []fetch.Source{AdultDataSource, AdultTestSource, LastFMSource, TCGASource}
}

// FetchAdult downloads adult.data and adult.test (verified against their
// recorded SHA-256) into dir, ready for LoadAdult(dir, ...).
func FetchAdult(ctx context.Context, dir string, client *http.Client) error {
	for _, s := range []fetch.Source{AdultDataSource, AdultTestSource} {
		if _, err := s.Fetch(ctx, dir, "", client); err != nil {
			return err
		}
	}
	return nil
}

// FetchLastFM downloads the SNAP LastFM Asia archive into cacheDir, verified
// against zipSHA256 (required: no sum of the archive is recorded), extracts
// its edges, target and artist-likes files, and returns the directory that
// holds them, ready for LoadLastFM.
func FetchLastFM(ctx context.Context, cacheDir, zipSHA256 string, client *http.Client) (string, error) {
	if zipSHA256 == "" {
		return "", fmt.Errorf("%w: FetchLastFM needs the archive's SHA-256", fetch.ErrNoChecksum)
	}
	archive, err := LastFMSource.Fetch(ctx, cacheDir, zipSHA256, client)
	if err != nil {
		return "", err
	}
	written, err := fetch.ExtractZip(archive, cacheDir, LastFMEdgesFile, LastFMTargetFile, LastFMFeaturesFile)
	if err != nil {
		return "", err
	}
	return fetch.MemberDir(written, LastFMEdgesFile, LastFMTargetFile)
}

// FetchTCGA downloads UCI's TCGA PANCAN archive into cacheDir (verified
// against its recorded SHA-256), extracts data.csv and labels.csv, and
// returns the directory that holds them, ready for LoadTCGA.
func FetchTCGA(ctx context.Context, cacheDir string, client *http.Client) (string, error) {
	archive, err := TCGASource.Fetch(ctx, cacheDir, "", client)
	if err != nil {
		return "", err
	}
	written, err := fetch.ExtractTarGz(archive, cacheDir, TCGADataFile, TCGALabelsFile)
	if err != nil {
		return "", err
	}
	return fetch.MemberDir(written, TCGADataFile, TCGALabelsFile)
}
