package trainer

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/internal/clip"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
)

// seededNoise is a GaussianNoise from a seeded generator (the tests' own;
// releases use perturb's sources).
type seededNoise struct{ r *rand.Rand }

func (s seededNoise) AddGaussian(w []float64, sigma float64) error {
	for i := range w {
		w[i] += sigma * s.r.NormFloat64()
	}
	return nil
}

// zeroNoise adds nothing: it isolates the gradient part of a step.
type zeroNoise struct{}

func (zeroNoise) AddGaussian([]float64, float64) error { return nil }

// dpsgdPriv returns the randomness of a seeded test run.
func dpsgdPriv(sigma float64, seed uint64) DPSGD {
	return DPSGD{NoiseMultiplier: sigma, Noise: seededNoise{rand.New(rand.NewPCG(seed, 1))}, Coins: rand.NewPCG(seed, 2)}
}

// dpsgdConfig is a small logistic DP-SGD setting: expected batch 20 of
// 200 rows, 3 passes, C = 0.5 (below the loss's bound 1, so clipping
// binds), an elastic net.
func dpsgdConfig() Config {
	return Config{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 1e-3, L1Ratio: 0.1}, Eta: 0.5, Batch: 20, Passes: 3, Clip: 0.5, Seed: 7}
}

func trainDP(t *testing.T, cfg Config, X mat.Matrix, y []float64, priv DPSGD, hook dpsgdHook) (*Model, *Run) {
	t.Helper()
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, run, err := tr.trainDPSGD(context.Background(), X, y, priv, hook)
	if err != nil {
		t.Fatal(err)
	}
	return m, run
}

// TestDPSGDNeighbourSums is the gradient-level neighbour test: on two data
// sets that differ in one row (replace-one), with the same seeds, every
// step draws the same batch (the coins never read the rows), and at the
// weights of the run on the first data set the clipped sums differ by at
// most 2C, and not at all in a step without the row. Softmax runs the
// K > 1 path; the clipping binds on both.
func TestDPSGDNeighbourSums(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     Config
		classes int
	}{
		{"logistic", dpsgdConfig(), 0},
		{"softmax", func() Config {
			c := dpsgdConfig()
			c.Loss, c.Classes, c.Clip = losses.Softmax{}, 3, 0.3
			return c
		}(), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			X, y := synthData(200, 5, tc.classes, 3)
			X2 := mat.DenseCopyOf(X)
			y2 := slices.Clone(y)
			const diff = 17
			X2.SetRow(diff, []float64{-0.6, 0.5, -0.4, 0.3, -0.2})
			if tc.classes > 0 {
				y2[diff] = math.Mod(y[diff]+1, 3)
			} else {
				y2[diff] = -y[diff]
			}
			tr2, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			p2, err := tr2.newProblem(X2, y2)
			if err != nil {
				t.Fatal(err)
			}
			other := newDPSGDRun(p2, dpsgdPriv(1, 1))
			var batches [][]int
			with, clipped := 0, 0
			C := tc.cfg.Clip
			trainDP(t, tc.cfg, X, y, dpsgdPriv(1, 5), func(step int, w []float64, batch []int, sum []float64) {
				batches = append(batches, slices.Clone(batch))
				copy(other.w, w)
				other.batch = append(other.batch[:0], batch...)
				other.clippedSum()
				var d2 float64
				for i := range sum {
					d2 += (sum[i] - other.sum[i]) * (sum[i] - other.sum[i])
				}
				dn := math.Sqrt(d2)
				in := slices.Contains(batch, diff)
				switch {
				case dn > 2*C*(1+1e-12):
					t.Errorf("step %d: the clipped sums differ by %v > 2C = %v", step, dn, 2*C)
				case !in && dn != 0:
					t.Errorf("step %d: the sums differ by %v without the replaced row", step, dn)
				}
				if in {
					with++
					if dn > C {
						clipped++
					}
				}
			})
			if with == 0 || clipped == 0 {
				t.Fatalf("the replaced row was in %d batches, %d of them with a difference above C: the test shows nothing", with, clipped)
			}
			var batches2 [][]int
			trainDP(t, tc.cfg, X2, y2, dpsgdPriv(1, 5), func(_ int, _ []float64, batch []int, _ []float64) {
				batches2 = append(batches2, slices.Clone(batch))
			})
			if !slices.EqualFunc(batches, batches2, slices.Equal) {
				t.Error("the neighbouring data set drew other batches with the same seeds: the coins read the rows")
			}
		})
	}
}

// TestDPSGDExpectedBatch checks that a step divides its sum by the
// expected batch b, not by the number of rows drawn: with no noise and no
// regularization, the first step from w = 0 moves to -(eta/b) times the
// clipped sum, and the batch drawn has another size than b.
func TestDPSGDExpectedBatch(t *testing.T) {
	cfg := dpsgdConfig()
	cfg.Reg = regularizers.ElasticNet{}
	X, y := synthData(200, 5, 0, 3)
	var first []float64
	size := 0
	trainDP(t, cfg, X, y, DPSGD{NoiseMultiplier: 1, Noise: zeroNoise{}, Coins: rand.NewPCG(2, 2)}, func(step int, w []float64, batch []int, sum []float64) {
		switch step {
		case 1:
			first, size = slices.Clone(sum), len(batch)
		case 2:
			for i := range w {
				if want := -(cfg.Eta / float64(cfg.Batch)) * first[i]; w[i] != want {
					t.Errorf("w[%d] = %v after the first step, want -(eta/b) sum = %v (b = %d, %d rows drawn)", i, w[i], want, cfg.Batch, size)
				}
			}
		}
	})
	if size == cfg.Batch {
		t.Fatalf("the first batch has b = %d rows: pick another seed, the test cannot tell the sizes apart", size)
	}
}

// TestDPSGDReproducible checks that a seeded run is bit-reproducible, that
// another coin seed or noise seed changes it, and the run record.
func TestDPSGDReproducible(t *testing.T) {
	cfg := dpsgdConfig()
	cfg.Average = true
	X, y := synthData(200, 5, 0, 3)
	a, run := trainDP(t, cfg, X, y, dpsgdPriv(0.8, 1), nil)
	b, _ := trainDP(t, cfg, X, y, dpsgdPriv(0.8, 1), nil)
	if !sameBits(a.W, b.W) {
		t.Error("two runs with the same seeds differ")
	}
	c, _ := trainDP(t, cfg, X, y, DPSGD{NoiseMultiplier: 0.8, Noise: seededNoise{rand.New(rand.NewPCG(1, 1))}, Coins: rand.NewPCG(9, 2)}, nil)
	if sameBits(a.W, c.W) {
		t.Error("another coin seed gives the same weights")
	}
	want := DPSGDRecord{SampleRate: PoissonRate(200, 20), NoiseMultiplier: 0.8, NoiseStd: 0.8 * 0.5, Steps: 30}
	if run.DPSGD == nil || *run.DPSGD != want || run.Sampling != SamplingPoisson || run.StepsPerPass != 10 || len(run.PassMaxStep) != 3 {
		t.Errorf("run record %+v, sampling %q, %d steps per pass, want %+v", run.DPSGD, run.Sampling, run.StepsPerPass, want)
	}
}

// TestDPSGDRefuses checks the settings and sources a DP-SGD run refuses.
func TestDPSGDRefuses(t *testing.T) {
	X, y := synthData(50, 3, 0, 3)
	for name, tc := range map[string]struct {
		set  func(*Config)
		priv DPSGD
	}{
		"no clip":    {func(c *Config) { c.Clip = 0 }, dpsgdPriv(1, 1)},
		"dropout":    {func(c *Config) { c.Dropout = 0.5 }, dpsgdPriv(1, 1)},
		"tolerance":  {func(c *Config) { c.Tolerance = 1e-3 }, dpsgdPriv(1, 1)},
		"sigma 0":    {func(*Config) {}, dpsgdPriv(0, 1)},
		"sigma NaN":  {func(*Config) {}, dpsgdPriv(math.NaN(), 1)},
		"no coins":   {func(*Config) {}, DPSGD{NoiseMultiplier: 1, Noise: zeroNoise{}}},
		"no noise":   {func(*Config) {}, DPSGD{NoiseMultiplier: 1, Coins: rand.NewPCG(1, 1)}},
		"user graph": {func(c *Config) { c.Loss = nil }, dpsgdPriv(1, 1)},
	} {
		cfg := dpsgdConfig()
		tc.set(&cfg)
		tr := &Trainer{cfg: cfg.withDefaults()}
		if _, _, err := tr.TrainDPSGD(context.Background(), X, y, tc.priv); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
}

// TestDPSGDMarginSumBits checks that the clipped sum of a K = 1 loss
// (marginSum where it runs, a chunk of rows at a time) has the bits of the
// loop of clippedSum's doc, row after row in the batch's order: dot, the
// derivative, clip.Bound's Fast test or Scale, axpy; on batches of 0 to
// 100 rows (chunks full, partial and of fewer than 4 rows) of 7 features,
// with a clipping norm that binds on some rows and not on others.
func TestDPSGDMarginSumBits(t *testing.T) {
	const n, d = 300, 7
	X, y := synthData(n, d, 0, 5)
	cfg := dpsgdConfig()
	cfg.Clip = 0.3
	p := newTestProblem(t, cfg, X, y)
	r := newDPSGDRun(p, dpsgdPriv(1, 1))
	rng := rand.New(rand.NewPCG(5, 5))
	for j := range r.w {
		r.w[j] = 3 * rng.NormFloat64()
	}
	margin := p.loss.(losses.Margin)
	bound, g := clip.New(cfg.Clip, d), make([]float64, 1)
	fast, scaled := 0, 0
	for _, m := range []int{0, 1, 2, 3, 4, 5, 15, 16, 17, 33, 100} {
		batch := rng.Perm(n)[:m]
		slices.Sort(batch)
		r.batch = append(r.batch[:0], batch...)
		r.clippedSum()
		want := make([]float64, d)
		for _, i := range batch {
			x := p.x[i*d : (i+1)*d]
			g[0] = margin.Deriv(dot(r.w, x), p.y[i])
			if bound.Fast(math.Abs(g[0]) * p.norm[i]) {
				fast++
			} else {
				bound.Scale(g, x)
				scaled++
			}
			axpy(g[0], x, want)
		}
		if !sameBits(r.sum, want) {
			t.Errorf("%d rows: the clipped sum is %v, row by row %v", m, r.sum, want)
		}
	}
	if fast == 0 || scaled == 0 {
		t.Fatalf("%d rows within the clipping norm, %d clipped: the test shows nothing", fast, scaled)
	}
}

// TestDPSGDStepAllocs checks that a DP-SGD step allocates nothing once the
// run is set up: at b = 1 and b = 20, with the noise of perturb.Seeded
// (merged with no L1 part, step by step with one) and of perturb.Secure.
func TestDPSGDStepAllocs(t *testing.T) {
	X, y := synthData(300, 7, 0, 5)
	for _, tc := range []struct {
		name  string
		noise func() GaussianNoise
		l1    float64
	}{
		{"seeded", func() GaussianNoise { return perturb.Seeded(1) }, 0.1},
		{"seeded-merged", func() GaussianNoise { return perturb.Seeded(1) }, 0},
		{"secure", func() GaussianNoise { return perturb.Secure() }, 0.1},
	} {
		for _, b := range []int{1, 20} {
			cfg := dpsgdConfig()
			cfg.Batch, cfg.Passes, cfg.Reg.L1Ratio = b, 50, tc.l1
			r := newDPSGDRun(newTestProblem(t, cfg, X, y), DPSGD{NoiseMultiplier: 1, Noise: tc.noise(), Coins: rand.NewPCG(3, 3)})
			step := 0
			if a := testing.AllocsPerRun(200, func() {
				step++
				if err := r.step(step); err != nil {
					t.Fatal(err)
				}
			}); a != 0 {
				t.Errorf("%s, b = %d: %v allocations a step", tc.name, b, a)
			}
		}
	}
}
