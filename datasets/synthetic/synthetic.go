package synthetic

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/internal/check"
)

// ErrConfig is returned (wrapped) for invalid arguments of the generators.
// It wraps datasets.ErrInvalid.
var ErrConfig = fmt.Errorf("%w: synthetic data configuration", datasets.ErrInvalid)

// LogisticOptions configures Logistic. The zero value plants a
// parameter of norm 2*sqrt(d).
type LogisticOptions struct {
	// ThetaNorm is the norm of the planted parameter. With rows uniform in
	// the unit ball the margin <theta, x> has standard deviation
	// ThetaNorm/sqrt(d+2), so the default 2*sqrt(d) (used when zero) gives
	// margins of order 2 whatever d. It must be finite and non-negative.
	ThetaNorm float64
}

// Logistic draws n examples in d dimensions from a planted logistic
// model: rows x_i uniform in the unit ball (so ||x_i|| <= 1 = kappa without
// clipping), theta uniform on the sphere of radius opts.ThetaNorm, and
// P(y_i = +1 | x_i) = 1/(1+exp(-<theta, x_i>)), labels -1/+1. Randomness is
// a PCG source seeded with seed: the same arguments give the same data. It
// returns the data set and theta.
func Logistic(n, d int, seed uint64, opts LogisticOptions) (*datasets.Dataset, []float64, error) {
	if err := checkShape(n, d); err != nil {
		return nil, nil, err
	}
	norm := opts.ThetaNorm
	if !check.NonNegative(norm) {
		return nil, nil, fmt.Errorf("%w: ThetaNorm = %v", ErrConfig, norm)
	}
	if norm == 0 {
		norm = 2 * math.Sqrt(float64(d))
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5deece66d))
	theta := randomUnitVector(rng, d)
	for j := range theta {
		theta[j] *= norm
	}
	x := unitBallRows(rng, n, d)
	y := make([]float64, n)
	for i := range n {
		p := 1 / (1 + math.Exp(-mat.Dot(mat.NewVecDense(d, x.RawRowView(i)), mat.NewVecDense(d, theta))))
		y[i] = -1
		if rng.Float64() < p {
			y[i] = 1
		}
	}
	return &datasets.Dataset{
		X:        x,
		Y:        y,
		Features: featureNames(d),
		Classes:  []string{"-1", "+1"},
		Notes: []string{fmt.Sprintf("synthetic: planted logistic model, n = %d, d = %d, ||theta|| = %g, rows uniform in the unit ball, seed %d",
			n, d, norm, seed)},
	}, theta, nil
}

// LinearGaussian draws n examples in d dimensions from the linear Gaussian
// model used for per-instance DP in Wang ("Per-instance Differential
// Privacy", 2019): y_i = <theta, x_i> + N(0, sigma^2), with rows x_i uniform
// in the unit ball and theta uniform on the unit sphere. Labels are real
// values (Classes nil). Randomness is a PCG source seeded with seed. It
// returns the data set and theta.
func LinearGaussian(n, d int, sigma float64, seed uint64) (*datasets.Dataset, []float64, error) {
	if err := checkShape(n, d); err != nil {
		return nil, nil, err
	}
	if !check.NonNegative(sigma) {
		return nil, nil, fmt.Errorf("%w: sigma = %v", ErrConfig, sigma)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x2545f4914f6cdd1d))
	theta := randomUnitVector(rng, d)
	x := unitBallRows(rng, n, d)
	y := make([]float64, n)
	tv := mat.NewVecDense(d, theta)
	for i := range n {
		y[i] = mat.Dot(mat.NewVecDense(d, x.RawRowView(i)), tv) + sigma*rng.NormFloat64()
	}
	return &datasets.Dataset{
		X:        x,
		Y:        y,
		Features: featureNames(d),
		Notes: []string{fmt.Sprintf("synthetic: linear Gaussian model y = <theta, x> + N(0, %g^2), n = %d, d = %d, ||theta|| = 1, rows uniform in the unit ball, seed %d",
			sigma, n, d, seed)},
	}, theta, nil
}

func checkShape(n, d int) error {
	if n < 1 || d < 1 {
		return fmt.Errorf("%w: n = %d, d = %d, want both >= 1", ErrConfig, n, d)
	}
	if n > math.MaxInt32/d {
		return fmt.Errorf("%w: n*d = %d*%d is too large", ErrConfig, n, d)
	}
	return nil
}

// randomUnitVector returns a vector uniform on the unit sphere of R^d.
func randomUnitVector(rng *rand.Rand, d int) []float64 {
	for {
		v := make([]float64, d)
		s := 0.0
		for j := range v {
			v[j] = rng.NormFloat64()
			s += v[j] * v[j]
		}
		if s == 0 {
			continue
		}
		s = math.Sqrt(s)
		for j := range v {
			v[j] /= s
		}
		return v
	}
}

// unitBallRows returns n rows uniform in the unit ball of R^d: a uniform
// direction scaled by U^(1/d).
func unitBallRows(rng *rand.Rand, n, d int) *mat.Dense {
	x := mat.NewDense(n, d, nil)
	for i := range n {
		row := x.RawRowView(i)
		r := math.Pow(rng.Float64(), 1/float64(d))
		for j, v := range randomUnitVector(rng, d) {
			row[j] = r * v
		}
	}
	return x
}

func featureNames(d int) []string {
	names := make([]string, d)
	for j := range names {
		names[j] = fmt.Sprintf("x%d", j+1)
	}
	return names
}
