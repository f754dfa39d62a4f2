package trainer

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/clip"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
)

// naiveDPSGD runs DP-SGD on p from its definition (TrainDPSGD's doc), one
// step after another with none of the run's fusions: the batch of a
// Poisson sampler on coins drawn when the step needs it, each row's
// gradient at the step's weights (the margins by dot, the loss's
// gradient) clipped by clip.Bound's Fast test or Scale and added by axpy
// in the batch's order, sigma C z added to every coordinate of the sum (z
// from rng: by AddGaussian's law, or from blocks of normalBlock draws as a
// NormalFiller's are taken, when filler), then Step.Update and, with
// Average, Step.Average. It returns the last iterate and the average (nil
// without Average).
func naiveDPSGD(p *problem, sigma float64, rng *rand.Rand, filler bool, coins rand.Source) (w, avg []float64) {
	k, d := p.k, p.d
	sampler := NewPoissonSampler(coins, p.n, p.cfg.Batch)
	bound := clip.New(p.cfg.Clip, k*d)
	w, sum := make([]float64, k*d), make([]float64, k*d)
	z, g := make([]float64, k), make([]float64, k)
	if p.cfg.Average {
		avg = make([]float64, k*d)
	}
	zbuf := make([]float64, max(normalBlock, k*d))
	zpos := len(zbuf)
	std := sigma * p.cfg.Clip
	for t := 1; t <= p.cfg.Passes*p.run.StepsPerPass; t++ {
		clear(sum)
		for _, i := range sampler.Sample(nil) {
			x := p.x[i*d : (i+1)*d]
			for c := range z {
				z[c] = dot(w[c*d:(c+1)*d], x)
			}
			p.loss.Grad(g, z, p.y[i])
			if !bound.Fast(math.Sqrt(sqNorm(g)) * p.norm[i]) {
				bound.Scale(g, x)
			}
			for c, gc := range g {
				axpy(gc, x, sum[c*d:(c+1)*d])
			}
		}
		if filler && len(zbuf)-zpos < len(sum) {
			for j := range zbuf {
				zbuf[j] = rng.NormFloat64()
			}
			zpos = 0
		}
		for j := range sum {
			if filler {
				sum[j] += float64(std * zbuf[zpos+j])
			} else {
				sum[j] += std * rng.NormFloat64()
			}
		}
		if filler {
			zpos += len(sum)
		}
		eta, err := p.sgd.Eta(t)
		if err != nil {
			panic(err)
		}
		p.sgd.Update(w, eta, sum)
		if avg != nil {
			p.sgd.Average(avg, w, t)
		}
	}
	return w, avg
}

// adversarialRows returns n rows of d features (synthData's) and labels
// for classes (0: +-1) with rows that test the clipping: zero rows, rows
// of entries 1e300 (their sum of squares overflows), of one entry 1e200,
// of subnormal entries, and rows far longer than kappa = 1.
func adversarialRows(n, d, classes int) (*mat.Dense, []float64) {
	X, y := synthData(n, d, classes, 11)
	for i := 0; i < n; i += 7 {
		row := X.RawRowView(i)
		for j := range row {
			switch i / 7 % 5 {
			case 0:
				row[j] = 0
			case 1:
				row[j] = 1e300 * float64(1-2*(j%2))
			case 2:
				row[j] = float64(min(j, 1)) * 1e200
			case 3:
				row[j] *= 1e-310
			case 4:
				row[j] *= 50
			}
		}
	}
	return X, y
}

// TestDPSGDMatchesNaive checks that TrainDPSGD returns the bits of
// naiveDPSGD, the run from its definition, on adversarial rows: expected
// batches of 1 (steps of no row and of one), 16, 17 and 37 (a partial
// chunk of 16 rows) and n (every row, n not a multiple of the batch), for
// logistic, Huber and squared margins and softmax (K = 3), with an L1
// part, a projection, the average of the iterates and the inverse-t step,
// with noise that is a NormalFiller (wherever the run does not merge its
// noise: an L1 part, a projection or the average) and noise that is not.
// The sums and clipping of the run and of the definition must agree to the
// bit at every step through the last.
func TestDPSGDMatchesNaive(t *testing.T) {
	const n = 203
	for _, tc := range []struct {
		name    string
		d, k    int
		loss    losses.Loss
		edit    func(c *Config)
		batches []int
	}{
		{"logistic, l1", 7, 0, losses.Logistic{}, func(c *Config) { c.Reg.L1Ratio = 0.3 }, []int{1, 16, 17, 37, n}},
		{"logistic, radius, average", 3, 0, losses.Logistic{}, func(c *Config) { c.Radius, c.Average = 0.2, true }, []int{1, 17, 37}},
		{"huber, inverse-t, l1", 9, 0, losses.Huber{Delta: 0.5}, func(c *Config) { c.Schedule, c.Reg.L1Ratio = InverseT, 0.5 }, []int{1, 37}},
		{"squared, radius, average", 5, 0, losses.Squared{}, func(c *Config) { c.Average, c.LabelBound, c.Radius = true, 1, 2 }, []int{1, 33}},
		{"softmax, radius", 6, 3, losses.Softmax{}, func(c *Config) { c.Radius = 0.5 }, []int{1, 20, n}},
		{"softmax, l1, average", 5, 3, losses.Softmax{}, func(c *Config) { c.Reg.L1Ratio, c.Average = 0.2, true }, []int{16, 37}},
	} {
		X, y := adversarialRows(n, tc.d, tc.k)
		for _, b := range tc.batches {
			for _, filler := range []bool{false, true} {
				cfg := Config{Loss: tc.loss, Reg: regularizers.ElasticNet{Lambda: 0.05}, Eta: 0.5, Batch: b, Passes: 2, Clip: 0.3, Seed: 7, Classes: tc.k}
				tc.edit(&cfg)
				var noise GaussianNoise = seededNoise{rand.New(rand.NewPCG(3, uint64(b)))}
				if filler {
					noise = seededFiller{rand.New(rand.NewPCG(3, uint64(b)))}
				}
				m, _ := trainDP(t, cfg, X, y, DPSGD{NoiseMultiplier: 0.9, Noise: noise, Coins: rand.NewPCG(5, uint64(b))}, nil)
				if filler && newDPSGDRun(newTestProblem(t, cfg, X, y), DPSGD{NoiseMultiplier: 0.9, Noise: noise, Coins: rand.NewPCG(5, 5)}).merge {
					t.Fatalf("%s: the run merges its noise: no bits to compare", tc.name)
				}
				w, avg := naiveDPSGD(newTestProblem(t, cfg, X, y), 0.9, rand.New(rand.NewPCG(3, uint64(b))), filler, rand.NewPCG(5, uint64(b)))
				if avg != nil {
					w = avg
				}
				if !sameBits(m.W, w) {
					t.Errorf("%s, b = %d, NormalFiller %v: TrainDPSGD gives %v, the definition %v", tc.name, b, filler, m.W, w)
				}
			}
		}
	}
}
