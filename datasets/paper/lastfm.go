package paper

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/categorical"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/internal/inputcap"
)

// ErrLastFMFormat is returned (wrapped, with details) for malformed LastFM
// Asia files. It wraps datasets.ErrFormat.
var ErrLastFMFormat = fmt.Errorf("%w: LastFM Asia", datasets.ErrFormat)

// Names of the SNAP LastFM Asia files LoadLastFM reads from its directory.
const (
	LastFMEdgesFile    = "lastfm_asia_edges.csv"
	LastFMTargetFile   = "lastfm_asia_target.csv"
	LastFMFeaturesFile = "lastfm_asia_features.json"
)

// DefaultLastFMComponents is the number of SVD components LoadLastFM keeps
// when LastFMOptions.Components is zero.
const DefaultLastFMComponents = 32

// Settings of the randomized SVD used by LoadLastFM.
const (
	lastfmOversample = 10
	lastfmPowerIters = 4
)

// LastFMOptions configures LoadLastFM. The zero value keeps 32 SVD
// components of the adjacency rows (or of the artist indicators when the
// artist-likes file is present), with SVD seed 0.
type LastFMOptions struct {
	// Components is the number of truncated-SVD components kept. Zero means
	// DefaultLastFMComponents; a negative value keeps the raw sparse columns
	// as a dense matrix (7,624 x 7,624 for the adjacency: about 465 MB).
	Components int
	// TwoHop appends to each graph-derived row the counts of 2-hop paths
	// (the row of A^2) before the SVD. It has no effect when the artist-likes
	// file is used.
	TwoHop bool
	// IgnoreArtists derives the features from the graph even when the
	// artist-likes file is present.
	IgnoreArtists bool
	// Seed seeds the randomized SVD.
	Seed uint64
}

// LoadLastFM reads the SNAP LastFM Asia social network from dir: the
// undirected mutual-follow edges (lastfm_asia_edges.csv: node_1,node_2) and
// the country classes (lastfm_asia_target.csv: id,target). Rows are the
// nodes in increasing id order; labels are class indices 0..K-1 (K = 18) in
// increasing target order and Classes holds the target ids as strings.
//
// Features: when lastfm_asia_features.json (user id -> list of liked artist
// ids) is present, each user's artist indicators (columns in increasing
// artist id); otherwise, as in the offline copy, features derived from the
// graph: each node's adjacency row (and, with TwoHop, its row of A^2),
// and a Note says so. Either way the sparse rows are reduced by a truncated
// SVD (preprocess.FitTruncatedSVD: exact from X^T X when the columns are
// few, else randomized with oversampling 10 and 4 power iterations) to
// Components columns, fitted on all nodes (transductive, as in the paper's
// protocol).
func LoadLastFM(dir string, opts LastFMOptions) (*datasets.Dataset, error) {
	k := opts.Components
	if k == 0 {
		k = DefaultLastFMComponents
	}
	tgt, err := readLastFMFile(filepath.Join(dir, LastFMTargetFile), readLastFMTargets)
	if err != nil {
		return nil, err
	}
	ids, targets := tgt[0], tgt[1]
	index := make(map[int]int, len(ids))
	for i, id := range ids {
		index[id] = i
	}
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = strconv.Itoa(t)
	}
	y, classes, err := categorical.EncodeClasses(names, "")
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrLastFMFormat, LastFMTargetFile, err)
	}
	ds := &datasets.Dataset{Y: y, Classes: classes}

	var (
		feats  *sparseRowMatrix
		fnames []string
		what   string
	)
	artistsPath := filepath.Join(dir, LastFMFeaturesFile)
	_, statErr := os.Stat(artistsPath)
	useArtists := statErr == nil && !opts.IgnoreArtists
	if useArtists {
		f, err := inputcap.Open(artistsPath, lastFMArtistsCaps)
		if err != nil {
			return nil, fmt.Errorf("paper: LastFM: %w", err)
		}
		feats, fnames, err = readLastFMArtists(inputcap.NewReader(f, lastFMArtistsCaps), index)
		f.Close()
		if err != nil {
			return nil, err
		}
		what = "liked-artist indicators from " + LastFMFeaturesFile
	} else {
		edges, err := readLastFMFile(filepath.Join(dir, LastFMEdgesFile), func(r io.Reader) ([][2]int, error) {
			return readLastFMEdges(r, index)
		})
		if err != nil {
			return nil, err
		}
		adj := newAdjacency(len(ids), edges)
		feats = adj
		what = "adjacency rows"
		for _, id := range ids {
			fnames = append(fnames, "adj_"+strconv.Itoa(id))
		}
		if opts.TwoHop {
			feats = hstackSparse(adj, adj.mulSparse(adj))
			what = "adjacency rows and 2-hop path counts (rows of A and A^2)"
			for _, id := range ids {
				fnames = append(fnames, "hop2_"+strconv.Itoa(id))
			}
		}
		reason := "is absent"
		if statErr == nil {
			reason = "was ignored (IgnoreArtists)"
		}
		ds.Notes = append(ds.Notes, fmt.Sprintf("lastfm: node features were derived from the graph (%s, %d edges) because the artist-likes file %s %s; the paper used artist likes",
			what, len(edges), LastFMFeaturesFile, reason))
	}
	if feats.cols == 0 {
		return nil, fmt.Errorf("%w: no feature columns (%s)", ErrLastFMFormat, what)
	}
	if k < 0 {
		ds.X = feats.toDense()
		ds.Features = fnames
		ds.Notes = append(ds.Notes, fmt.Sprintf("lastfm: %d raw %s columns, no SVD", len(fnames), what))
		return ds, nil
	}
	x, proj, err := preprocess.TruncatedSVD(feats, k, lastfmOversample, lastfmPowerIters, opts.Seed)
	if err != nil {
		return nil, fmt.Errorf("paper: LastFM: %w", err)
	}
	ds.X = x
	ds.Features = proj.FeatureNames("svd")
	ds.Notes = append(ds.Notes, fmt.Sprintf("lastfm: %d x %d %s reduced to %d components by truncated SVD (seed %d), fitted on all nodes",
		len(ids), len(fnames), what, k, opts.Seed))
	return ds, nil
}

// MaxLastFMArtistsBytes is the most bytes the artist-likes file
// (LastFMFeaturesFile, one JSON object; SNAP's is about 3 MB) may hold.
const MaxLastFMArtistsBytes = 64 << 20

// lastFMArtistsCaps are the caps of the artist-likes file.
var lastFMArtistsCaps = inputcap.Caps{Kind: "LastFM artist-likes file", Bytes: MaxLastFMArtistsBytes}

// readLastFMFile opens path and parses it with parse, under the caps of a
// data CSV (datasets.NewDataReader).
func readLastFMFile[T any](path string, parse func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, fmt.Errorf("paper: LastFM: %w", err)
	}
	defer f.Close()
	v, err := parse(datasets.NewDataReader(f))
	if err != nil {
		return zero, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return v, nil
}

// readLastFMPairs reads a two-column CSV of non-negative integers after a
// header.
func readLastFMPairs(r io.Reader) ([][2]int, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 2
	cr.ReuseRecord = true
	if _, err := cr.Read(); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrLastFMFormat, err)
	}
	var pairs [][2]int
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return pairs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrLastFMFormat, err)
		}
		var p [2]int
		for j, s := range rec {
			v, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || v < 0 {
				return nil, fmt.Errorf("%w: %q is not a non-negative integer", ErrLastFMFormat, s)
			}
			p[j] = v
		}
		pairs = append(pairs, p)
	}
}

// readLastFMTargets reads id,target rows and returns the ids and the
// targets, sorted by id.
func readLastFMTargets(r io.Reader) ([2][]int, error) {
	pairs, err := readLastFMPairs(r)
	if err != nil {
		return [2][]int{}, err
	}
	if len(pairs) == 0 {
		return [2][]int{}, fmt.Errorf("%w: no nodes", ErrLastFMFormat)
	}
	sort.Slice(pairs, func(a, b int) bool { return pairs[a][0] < pairs[b][0] })
	ids := make([]int, len(pairs))
	targets := make([]int, len(pairs))
	for i, p := range pairs {
		if i > 0 && p[0] == pairs[i-1][0] {
			return [2][]int{}, fmt.Errorf("%w: duplicate node id %d", ErrLastFMFormat, p[0])
		}
		ids[i], targets[i] = p[0], p[1]
	}
	return [2][]int{ids, targets}, nil
}

// readLastFMEdges reads node_1,node_2 rows as row-index pairs.
func readLastFMEdges(r io.Reader, index map[int]int) ([][2]int, error) {
	pairs, err := readLastFMPairs(r)
	if err != nil {
		return nil, err
	}
	for k, p := range pairs {
		for j, id := range p {
			i, ok := index[id]
			if !ok {
				return nil, fmt.Errorf("%w: edge %d-%d: node %d has no target", ErrLastFMFormat, p[0], p[1], id)
			}
			pairs[k][j] = i
		}
	}
	return pairs, nil
}

// readLastFMArtists reads the artist-likes JSON object (user id -> artist
// ids) into a sparse indicator matrix with one row per indexed node. Users
// absent from index are ignored; nodes absent from the file get a zero row.
func readLastFMArtists(r io.Reader, index map[int]int) (*sparseRowMatrix, []string, error) {
	var likes map[string][]int
	if err := json.NewDecoder(r).Decode(&likes); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrLastFMFormat, LastFMFeaturesFile, err)
	}
	artistSet := make(map[int]struct{})
	for _, as := range likes {
		for _, a := range as {
			if a < 0 {
				return nil, nil, fmt.Errorf("%w: %s: negative artist id %d", ErrLastFMFormat, LastFMFeaturesFile, a)
			}
			artistSet[a] = struct{}{}
		}
	}
	artists := make([]int, 0, len(artistSet))
	for a := range artistSet {
		artists = append(artists, a)
	}
	sort.Ints(artists)
	col := make(map[int]int, len(artists))
	names := make([]string, len(artists))
	for j, a := range artists {
		col[a] = j
		names[j] = "artist_" + strconv.Itoa(a)
	}
	rows := make([][]int, len(index))
	for user, as := range likes {
		id, err := strconv.Atoi(user)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s: user id %q is not an integer", ErrLastFMFormat, LastFMFeaturesFile, user)
		}
		i, ok := index[id]
		if !ok {
			continue
		}
		for _, a := range as {
			rows[i] = append(rows[i], col[a])
		}
	}
	return newSparseIndicator(len(artists), rows), names, nil
}

// SHA-256 sums of the extracted LastFM Asia files.
const (
	LastFMEdgesSHA256  = "548eacff61bff564ab5007831fa4a7a30e1a3956075ffd24e43310ed33555842"
	LastFMTargetSHA256 = "91f19215f6eca8321feec038bd32900cf13fd4f7e041a9976cf202807c72ac16"
)

// lastFM is SNAP's LastFM Asia in the registry.
var lastFM = DataSet{
	Name:   "lastfm",
	Title:  "SNAP LastFM Asia: 7,624 users, 18 country classes, features reduced to 32 SVD components by the loader",
	Dir:    "lastfm_asia",
	Marker: LastFMTargetFile,
	Load:   func(dir string) (*datasets.Dataset, error) { return LoadLastFM(dir, LastFMOptions{}) },
	// 6,099 training rows and an 18 x 33 softmax model: 7 values half a
	// decade apart from 1e-4 to 1e-1.
	Lambdas: []float64{1e-4, 3.1623e-4, 1e-3, 3.1623e-3, 1e-2, 3.1623e-2, 1e-1},
	Reduced: true,
	Notes: []string{"LastFM features: truncated SVD to 32 by the loader, fitted on all nodes (transductive, as in the paper); " +
		"without the artist-likes file (the offline copy) they are derived from the graph's adjacency rows"},
}
