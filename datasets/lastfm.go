package datasets

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

	"gonum.org/v1/gonum/mat"
)

// ErrLastFMFormat is returned (wrapped, with details) for malformed LastFM
// Asia files. It wraps ErrFormat.
var ErrLastFMFormat = fmt.Errorf("%w: LastFM Asia", ErrFormat)

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
// and a Note says so. Either way the sparse rows are reduced by a randomized
// truncated SVD (FitTruncatedSVD, oversampling 10, 4 power iterations) to
// Components columns, fitted on all nodes (transductive, as in the paper's
// protocol).
func LoadLastFM(dir string, opts LastFMOptions) (*Dataset, error) {
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
	y, classes, err := encodeClassNames(names, "")
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrLastFMFormat, LastFMTargetFile, err)
	}
	ds := &Dataset{Y: y, Classes: classes}

	var (
		feats  *sparseRowMatrix
		fnames []string
		what   string
	)
	artistsPath := filepath.Join(dir, LastFMFeaturesFile)
	_, statErr := os.Stat(artistsPath)
	useArtists := statErr == nil && !opts.IgnoreArtists
	if useArtists {
		f, err := os.Open(artistsPath)
		if err != nil {
			return nil, fmt.Errorf("datasets: LastFM: %w", err)
		}
		feats, fnames, err = readLastFMArtists(f, index)
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
	x, proj, err := TruncatedSVD(feats, k, lastfmOversample, lastfmPowerIters, opts.Seed)
	if err != nil {
		return nil, fmt.Errorf("datasets: LastFM: %w", err)
	}
	ds.X = x
	ds.Features = proj.FeatureNames("svd")
	ds.Notes = append(ds.Notes, fmt.Sprintf("lastfm: %d x %d %s reduced to %d components by randomized truncated SVD (seed %d), fitted on all nodes",
		len(ids), len(fnames), what, k, opts.Seed))
	return ds, nil
}

// readLastFMFile opens path and parses it with parse.
func readLastFMFile[T any](path string, parse func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, fmt.Errorf("datasets: LastFM: %w", err)
	}
	defer f.Close()
	v, err := parse(f)
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

// sparseRowMatrix is a compressed-sparse-row matrix. It implements
// mat.Matrix (At is a binary search) and the fast products of svdOperator.
type sparseRowMatrix struct {
	rows, cols int
	indptr     []int // row i holds entries indptr[i]:indptr[i+1]
	indices    []int // column of each entry, increasing within a row
	data       []float64
}

// newSparseIndicator returns the 0/1 matrix whose row i has ones in the
// columns listed in rows[i] (duplicates count once).
func newSparseIndicator(cols int, rows [][]int) *sparseRowMatrix {
	m := &sparseRowMatrix{rows: len(rows), cols: cols, indptr: make([]int, 1, len(rows)+1)}
	for _, r := range rows {
		sort.Ints(r)
		for k, c := range r {
			if k > 0 && c == r[k-1] {
				continue
			}
			m.indices = append(m.indices, c)
			m.data = append(m.data, 1)
		}
		m.indptr = append(m.indptr, len(m.indices))
	}
	return m
}

// newAdjacency returns the symmetric 0/1 adjacency matrix of an undirected
// graph on n nodes (repeated edges count once; a self-loop sets the
// diagonal).
func newAdjacency(n int, edges [][2]int) *sparseRowMatrix {
	rows := make([][]int, n)
	for _, e := range edges {
		rows[e[0]] = append(rows[e[0]], e[1])
		if e[0] != e[1] {
			rows[e[1]] = append(rows[e[1]], e[0])
		}
	}
	return newSparseIndicator(n, rows)
}

func (m *sparseRowMatrix) Dims() (int, int) { return m.rows, m.cols }

func (m *sparseRowMatrix) At(i, j int) float64 {
	if i < 0 || i >= m.rows || j < 0 || j >= m.cols {
		panic(mat.ErrIndexOutOfRange)
	}
	row := m.indices[m.indptr[i]:m.indptr[i+1]]
	k := sort.SearchInts(row, j)
	if k < len(row) && row[k] == j {
		return m.data[m.indptr[i]+k]
	}
	return 0
}

func (m *sparseRowMatrix) T() mat.Matrix { return mat.Transpose{Matrix: m} }

func (m *sparseRowMatrix) mulTo(dst, b *mat.Dense) {
	dst.Zero()
	for i := range m.rows {
		out := dst.RawRowView(i)
		for k := m.indptr[i]; k < m.indptr[i+1]; k++ {
			v, in := m.data[k], b.RawRowView(m.indices[k])
			for c := range out {
				out[c] += v * in[c]
			}
		}
	}
}

func (m *sparseRowMatrix) mulTransTo(dst, b *mat.Dense) {
	dst.Zero()
	for i := range m.rows {
		in := b.RawRowView(i)
		for k := m.indptr[i]; k < m.indptr[i+1]; k++ {
			v, out := m.data[k], dst.RawRowView(m.indices[k])
			for c := range out {
				out[c] += v * in[c]
			}
		}
	}
}

// mulSparse returns the sparse product m o (m.cols == o.rows).
func (m *sparseRowMatrix) mulSparse(o *sparseRowMatrix) *sparseRowMatrix {
	p := &sparseRowMatrix{rows: m.rows, cols: o.cols, indptr: make([]int, 1, m.rows+1)}
	acc := make([]float64, o.cols)
	var touched []int
	for i := range m.rows {
		touched = touched[:0]
		for k := m.indptr[i]; k < m.indptr[i+1]; k++ {
			j, v := m.indices[k], m.data[k]
			for kk := o.indptr[j]; kk < o.indptr[j+1]; kk++ {
				c := o.indices[kk]
				if acc[c] == 0 {
					touched = append(touched, c)
				}
				acc[c] += v * o.data[kk]
			}
		}
		sort.Ints(touched)
		for _, c := range touched {
			if acc[c] != 0 {
				p.indices = append(p.indices, c)
				p.data = append(p.data, acc[c])
			}
			acc[c] = 0
		}
		p.indptr = append(p.indptr, len(p.indices))
	}
	return p
}

// hstackSparse returns [a | b] (a.rows == b.rows).
func hstackSparse(a, b *sparseRowMatrix) *sparseRowMatrix {
	h := &sparseRowMatrix{rows: a.rows, cols: a.cols + b.cols, indptr: make([]int, 1, a.rows+1)}
	for i := range a.rows {
		for k := a.indptr[i]; k < a.indptr[i+1]; k++ {
			h.indices = append(h.indices, a.indices[k])
			h.data = append(h.data, a.data[k])
		}
		for k := b.indptr[i]; k < b.indptr[i+1]; k++ {
			h.indices = append(h.indices, a.cols+b.indices[k])
			h.data = append(h.data, b.data[k])
		}
		h.indptr = append(h.indptr, len(h.indices))
	}
	return h
}

// toDense returns m as a dense matrix.
func (m *sparseRowMatrix) toDense() *mat.Dense {
	d := mat.NewDense(m.rows, m.cols, nil)
	for i := range m.rows {
		row := d.RawRowView(i)
		for k := m.indptr[i]; k < m.indptr[i+1]; k++ {
			row[m.indices[k]] = m.data[k]
		}
	}
	return d
}
