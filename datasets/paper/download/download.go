package download

import (
	"context"
	"fmt"
	"net/http"

	"github.com/stabpriv/stabpriv/datasets/fetch"
	"github.com/stabpriv/stabpriv/datasets/paper"
)

// The canonical sources of the UCI Adult files.
var (
	// AdultDataSource is UCI Adult's training file (32,561 records).
	AdultDataSource = fetch.Source{
		Name:   paper.AdultTrainFile,
		URL:    "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.data",
		SHA256: "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
	}
	// AdultTestSource is UCI Adult's test file (16,281 records).
	AdultTestSource = fetch.Source{
		Name:   paper.AdultTestFile,
		URL:    "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.test",
		SHA256: "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
	}
)

// LastFMSource is SNAP's LastFM Asia archive (edges, target and the
// artist-likes JSON). No SHA-256 of the archive is recorded here: pass one
// to LastFM (the sums of the extracted edges and target files are
// paper.LastFMEdgesSHA256 and paper.LastFMTargetSHA256).
var LastFMSource = fetch.Source{
	Name: "lastfm_asia.zip",
	URL:  "https://snap.stanford.edu/data/lastfm_asia.zip",
}

// TCGASource is UCI's "gene expression cancer RNA-Seq" archive (TCGA
// PANCAN, 801 x 20,531, data.csv and labels.csv).
var TCGASource = fetch.Source{
	Name:   "TCGA-PANCAN-HiSeq-801x20531.tar.gz",
	URL:    "https://archive.ics.uci.edu/ml/machine-learning-databases/00401/TCGA-PANCAN-HiSeq-801x20531.tar.gz",
	SHA256: "e6ea3628f9656efa2d7cf382bf5a403e2cc214df3d90312b1928f5650b43a559",
}

// sources lists the canonical sources of each registered data set, by
// name (paper.Names); TestSourcesCoverRegistry keeps it in step with the
// registry.
var sources = map[string][]fetch.Source{
	"adult":    {AdultDataSource, AdultTestSource},
	"lastfm":   {LastFMSource},
	"gene_all": {TCGASource},
}

// SourcesOf returns the canonical sources of the data set called name (nil
// for a name the registry does not hold).
func SourcesOf(name string) []fetch.Source {
	return append([]fetch.Source(nil), sources[name]...)
}

// Sources lists the canonical sources of every registered data set, in
// registry order.
func Sources() []fetch.Source {
	var out []fetch.Source
	for _, name := range paper.Names() {
		out = append(out, sources[name]...)
	}
	return out
}

// Fetch downloads the data set called name into cacheDir, verified against
// its recorded SHA-256, and returns the folder ready for its loader. LastFM
// records no sum of its archive: Fetch refuses it (fetch.ErrNoChecksum), and
// LastFM takes a sum the caller trusts.
func Fetch(ctx context.Context, name, cacheDir string, client *http.Client) (string, error) {
	switch name {
	case "adult":
		return cacheDir, Adult(ctx, cacheDir, client)
	case "gene_all":
		return TCGA(ctx, cacheDir, client)
	case "lastfm":
		return "", fmt.Errorf("%w: no sum of the LastFM archive is recorded: call download.LastFM with one", fetch.ErrNoChecksum)
	}
	return "", fmt.Errorf("download: unknown data set %q (known: %v)", name, paper.Names())
}

// Adult downloads adult.data and adult.test (verified against their
// recorded SHA-256) into dir, ready for paper.LoadAdult(dir, ...).
func Adult(ctx context.Context, dir string, client *http.Client) error {
	for _, s := range []fetch.Source{AdultDataSource, AdultTestSource} {
		if _, err := s.Fetch(ctx, dir, "", client); err != nil {
			return err
		}
	}
	return nil
}

// LastFM downloads the SNAP LastFM Asia archive into cacheDir, verified
// against zipSHA256 (required: no sum of the archive is recorded), extracts
// its edges, target and artist-likes files, and returns the directory that
// holds them, ready for paper.LoadLastFM.
func LastFM(ctx context.Context, cacheDir, zipSHA256 string, client *http.Client) (string, error) {
	if zipSHA256 == "" {
		return "", fmt.Errorf("%w: download.LastFM needs the archive's SHA-256", fetch.ErrNoChecksum)
	}
	archive, err := LastFMSource.Fetch(ctx, cacheDir, zipSHA256, client)
	if err != nil {
		return "", err
	}
	written, err := fetch.ExtractZip(archive, cacheDir, paper.LastFMEdgesFile, paper.LastFMTargetFile, paper.LastFMFeaturesFile)
	if err != nil {
		return "", err
	}
	return fetch.MemberDir(written, paper.LastFMEdgesFile, paper.LastFMTargetFile)
}

// TCGA downloads UCI's TCGA PANCAN archive into cacheDir (verified against
// its recorded SHA-256), extracts data.csv and labels.csv, and returns the
// directory that holds them, ready for paper.LoadTCGA.
func TCGA(ctx context.Context, cacheDir string, client *http.Client) (string, error) {
	archive, err := TCGASource.Fetch(ctx, cacheDir, "", client)
	if err != nil {
		return "", err
	}
	written, err := fetch.ExtractTarGz(archive, cacheDir, paper.TCGADataFile, paper.TCGALabelsFile)
	if err != nil {
		return "", err
	}
	return fetch.MemberDir(written, paper.TCGADataFile, paper.TCGALabelsFile)
}
