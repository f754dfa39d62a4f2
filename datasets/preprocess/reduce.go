package preprocess

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
)

// Projection is a data-independent random projection of the mapped row z
// (of p entries) to K dimensions: u = R z, with R a K x p matrix of
// independent N(0, 1/K) entries drawn, row by row, from a PCG generator
// (math/rand/v2, NormFloat64) seeded with Seed. R depends on (K, p, Seed)
// alone, never on the rows, so the map is a per-row map with public
// constants: inside the guarantee at no cost. E||R z||^2 = ||z||^2
// (Johnson & Lindenstrauss; Achlioptas 2003 for the Gaussian entries).
type Projection struct {
	K    int    `json:"k"`
	Seed uint64 `json:"seed"`
}

// projKey identifies a projection matrix in projCache.
type projKey struct {
	k, p int
	seed uint64
}

// projCache keeps the projection matrices built, so that a model file's
// rows are mapped with one matrix however many rows are predicted.
var projCache sync.Map // projKey -> *mat.Dense

// Matrix returns R, the K x p matrix of the projection of rows of p
// entries. It panics unless K and p are positive.
func (pr *Projection) Matrix(p int) *mat.Dense {
	key := projKey{pr.K, p, pr.Seed}
	if m, ok := projCache.Load(key); ok {
		return m.(*mat.Dense)
	}
	r := rand.New(rand.NewPCG(pr.Seed, 0x70726f6a656374))
	s := 1 / math.Sqrt(float64(pr.K))
	data := make([]float64, pr.K*p)
	for i := range data {
		data[i] = r.NormFloat64() * s
	}
	m, _ := projCache.LoadOrStore(key, mat.NewDense(pr.K, p, data))
	return m.(*mat.Dense)
}

// Components are k private principal directions of the mapped rows (the
// eigenvectors of Analyze Gauss, package dppca), released with the model:
// V[i] is the i-th direction, of as many entries as the row it applies to
// (z, or R z after a Projection), and the directions are orthonormal.
type Components struct {
	V [][]float64 `json:"v"`
}

// SHA256 returns the SHA-256 of the directions, row after row (the
// certificate binds it; dp.WeightsSHA256 of the concatenation).
func (c *Components) SHA256() string {
	var all []float64
	for _, v := range c.V {
		all = append(all, v...)
	}
	return dp.WeightsSHA256(all)
}

// orthoTol is the largest |<v_i, v_j> - [i = j]| accepted of released
// directions: an eigendecomposition's are orthonormal to rounding (about
// 1e-13 for the dimensions dppca accepts); a direction edited by hand is
// not.
const orthoTol = 1e-8

// checkComponents checks k directions for rows of w entries: 1 <= k <= w,
// w entries each, finite, orthonormal within orthoTol, and at most
// MaxProjectionEntries entries in all.
func checkComponents(c *Components, w int) error {
	k := len(c.V)
	switch {
	case k < 1 || k > w:
		return fmt.Errorf("%w: %d principal components of rows of %d entries: want 1 <= k <= %d", datasets.ErrInvalid, k, w, w)
	case k > MaxProjectionEntries/w:
		return fmt.Errorf("%w: principal components of %d x %d entries, more than %d", datasets.ErrInvalid, k, w, MaxProjectionEntries)
	}
	for i, v := range c.V {
		if len(v) != w {
			return fmt.Errorf("%w: principal component %d has %d entries, the rows it applies to %d", datasets.ErrInvalid, i, len(v), w)
		}
		if j := check.FirstNonFinite(v); j >= 0 {
			return fmt.Errorf("%w: principal component %d, entry %d is %v", datasets.ErrInvalid, i, j, v[j])
		}
	}
	for i, v := range c.V {
		for j := i; j < k; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if g := floats.Dot(v, c.V[j]); math.Abs(g-want) > orthoTol {
				return fmt.Errorf("%w: principal components %d and %d have inner product %v, want %v (the directions are orthonormal)", datasets.ErrInvalid, i, j, g, want)
			}
		}
	}
	return nil
}

// ComponentWidth returns the number of entries of the row the principal
// components apply to: the projection's K, or the mapped features.
func (p *RowMap) ComponentWidth() int {
	if p.Project != nil {
		return p.Project.K
	}
	return p.width()
}

// SetComponents makes the map project its rows on the columns of V
// (ComponentWidth() x k, orthonormal: dppca.Result.V) before the unit-ball
// map; nil removes them. Errors wrap datasets.ErrInvalid (checkComponents).
func (p *RowMap) SetComponents(V mat.Matrix) error {
	if V == nil {
		p.PCA = nil
		p.Words = p.Explain()
		return nil
	}
	r, k := V.Dims()
	c := &Components{V: make([][]float64, k)}
	for i := range k {
		c.V[i] = mat.Col(nil, i, V)
	}
	if err := checkComponents(c, p.ComponentWidth()); err != nil {
		return fmt.Errorf("%w (a %d x %d matrix)", err, r, k)
	}
	p.PCA = c
	p.Words = p.Explain()
	return nil
}

// ComponentRows returns the rows the principal components are computed
// from, for the rows idx of enc: clip_1(z) (z, or R z after a
// projection), every row of norm at most 1, and the zero row for a null
// row (a label not declared), as in the release. The map's own components,
// if any, are not applied.
func (p *RowMap) ComponentRows(enc *datasets.Encoded, idx []int) (*mat.Dense, error) {
	q := *p
	q.PCA = nil
	st := q.stages()
	if len(idx) == 0 {
		return nil, fmt.Errorf("%w: no rows for the principal components", datasets.ErrInvalid)
	}
	Z := mat.NewDense(len(idx), q.ComponentWidth(), nil)
	for r, i := range idx {
		if enc.Null[i] {
			continue
		}
		row := Z.RawRowView(r)
		if err := q.features(row, enc.Row(i), st); err != nil {
			return nil, fmt.Errorf("data row %d: %w", enc.DataRow(i), err)
		}
		clipRow(row, 1)
	}
	return Z, nil
}

// MaxProjectionEntries bounds k p, the entries of a projection matrix
// (256 MiB of float64), so that a model file cannot make its reader
// allocate more.
const MaxProjectionEntries = 1 << 25

// SetProjection projects the map's rows to k dimensions with the seed
// (k = 0: no projection). Errors wrap datasets.ErrInvalid: k negative, or
// larger than the number of mapped features (a projection up would only
// add noise dimensions), or a matrix of more than MaxProjectionEntries.
func (p *RowMap) SetProjection(k int, seed uint64) error {
	if k == 0 {
		p.Project = nil
		p.Words = p.Explain()
		return nil
	}
	if err := checkProjection(k, p.width()); err != nil {
		return err
	}
	p.Project = &Projection{K: k, Seed: seed}
	p.Words = p.Explain()
	return nil
}

// checkProjection checks a projection to k dimensions of w mapped features.
func checkProjection(k, w int) error {
	switch {
	case k < 1 || k > w:
		return fmt.Errorf("%w: a projection to k = %d dimensions of %d mapped features: want 1 <= k <= %d", datasets.ErrInvalid, k, w, w)
	case k > MaxProjectionEntries/w:
		return fmt.Errorf("%w: a projection matrix of %d x %d entries, more than %d", datasets.ErrInvalid, k, w, MaxProjectionEntries)
	}
	return nil
}
