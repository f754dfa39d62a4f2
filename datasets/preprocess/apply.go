package preprocess

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/internal/check"
)

// Dim returns the number of model inputs: the numeric features, the
// indicators of the categorical ones, and the bias.
func (p *RowMap) Dim() int {
	if p.PCA != nil {
		return len(p.PCA.V) + 1
	}
	if p.Project != nil {
		return p.Project.K + 1
	}
	return p.width() + 1
}

// Apply writes the model input of the raw row x (len(p.Features) values;
// for a categorical feature the index of its category, CategoryIndex) into
// dst (p.Dim() values). Errors wrap datasets.ErrFormat: a length mismatch
// or a numeric value that is not finite. A categorical value that is not
// the index of a declared category gives its block of zeros.
func (p *RowMap) Apply(dst, x []float64) error {
	return p.mapper()(dst, x)
}

// stages are the constants and the room of a map's stages after the
// per-feature map: the projection R with its input z, and the row u the
// principal components apply to.
type stages struct {
	cats [][]string
	R    *mat.Dense
	z, u []float64
}

// stages returns the stages of p, computed once per mapper.
func (p *RowMap) stages() *stages {
	cats, _ := p.layout()
	st := &stages{cats: cats}
	if p.Project != nil {
		w := p.width()
		st.R = p.Project.Matrix(w)
		st.z = make([]float64, w)
	}
	if p.PCA != nil {
		st.u = make([]float64, p.ComponentWidth())
	}
	return st
}

// mapper returns Apply with the layout, the projection matrix and the
// room of p computed once.
func (p *RowMap) mapper() func(dst, x []float64) error {
	st := p.stages()
	return func(dst, x []float64) error { return p.apply(dst, x, st) }
}

// apply is Apply with the stages of p.
func (p *RowMap) apply(dst, x []float64, st *stages) error {
	d := len(dst) - 1
	if len(x) != len(p.Features) || d < 0 || d+1 != p.Dim() {
		return fmt.Errorf("%w: a row of %d values into %d inputs, the model has %d features and %d inputs with the bias", datasets.ErrFormat, len(x), len(dst), len(p.Features), p.Dim())
	}
	if p.PCA == nil {
		if err := p.features(dst[:d], x, st); err != nil {
			return err
		}
		if p.Stump {
			dst[d] = 1
			return nil
		}
		return UnitBallRow(dst, dst[:d])
	}
	u := st.u
	if err := p.features(u, x, st); err != nil {
		return err
	}
	clipRow(u, 1)
	for i, v := range p.PCA.V {
		dst[i] = floats.Dot(v, u)
	}
	return UnitBallRow(dst, dst[:d])
}

// features writes into out the row before the unit-ball map and the
// principal components: z, the per-feature map of x (and the one-hot
// blocks), or R z with a projection. out has the width of that row.
func (p *RowMap) features(out, x []float64, st *stages) error {
	z := out
	if st.R != nil {
		z = st.z
	}
	off, num := 0, 0
	for j, v := range x {
		if st.cats != nil && st.cats[j] != nil {
			block := z[off : off+len(st.cats[j])]
			clear(block)
			if k := int(v); float64(k) == v && k >= 0 && k < len(block) {
				block[k] = 1
			}
			off += len(block)
			continue
		}
		if math.IsNaN(v) && p.Missing {
			z[off] = 0 // a missing cell: the middle of the map
			off++
			num++
			continue
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: feature %q is %v", datasets.ErrFormat, p.Features[j], v)
		}
		switch p.Mode {
		case Bounds:
			lo, hi := p.Lo[num], p.Hi[num]
			if p.Log > 0 {
				// (x - m)/s unclamped: an infinite quotient squashes to +-1.
				v = SignedLog2((v-(lo/2+hi/2))/(hi/2-lo/2)) / p.Log
				z[off] = math.Max(-1, math.Min(1, v))
				break
			}
			v = math.Max(lo, math.Min(hi, v))
			// lo/2 and hi/2 keep the sum finite near the float64 range.
			v = (v - (lo/2 + hi/2)) / (hi/2 - lo/2)
			z[off] = math.Max(-1, math.Min(1, v))
		case Standardize:
			z[off] = (v - p.Mean[num]) / p.Scale[num]
		default:
			z[off] = v
		}
		off++
		num++
	}
	if st.R != nil {
		u := mat.NewVecDense(len(out), out)
		u.MulVec(st.R, mat.NewVecDense(len(z), z))
		if check.FirstNonFinite(out) >= 0 {
			projectScaled(u, st.R, z)
		}
		if j := check.FirstNonFinite(out); j >= 0 {
			return fmt.Errorf("%w: the projection of the row is not finite (entry %d is %v)", datasets.ErrFormat, j, out[j])
		}
	}
	return nil
}

// projectScaled writes into out the direction of R z, R (z/m) scaled to
// norm 1 with m = max_j |z_j|, for a finite z whose projection R z
// overflows: then ||R z|| > 1 and every map after the projection starts
// with clip_1, for which clip_1(R z) = R z / ||R z|| = R (z/m) / ||R (z/m)||
// in exact arithmetic. The entries of z/m are in [-1, 1], so R (z/m) is
// finite. The row map is thereby defined for every finite row, not only
// those whose projection fits the float64 range, and the rows whose
// projection does fit keep R z bit for bit. z is overwritten.
func projectScaled(out *mat.VecDense, R mat.Matrix, z []float64) {
	m := 0.0
	for _, v := range z {
		m = math.Max(m, math.Abs(v))
	}
	if m == 0 {
		// R 0 = 0 does not overflow: an infinite entry of R or of z is
		// left for the caller to report.
		return
	}
	for j := range z {
		z[j] /= m
	}
	out.MulVec(R, mat.NewVecDense(len(z), z))
	if nrm := floats.Norm(out.RawVector().Data, 2); nrm > 0 && !math.IsInf(nrm, 0) {
		out.ScaleVec(1/nrm, out)
	}
}
