package trainer

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
)

// countingNormals is a NormalFiller whose "normals" are 0, 1, 2, ... in
// the order drawn, so that a test can tell which draw went where. Its
// AddGaussian must not be called.
type countingNormals struct {
	t     *testing.T
	next  float64
	fills int
}

func (c *countingNormals) FillNormal(z []float64) {
	for i := range z {
		z[i] = c.next
		c.next++
	}
	c.fills++
}

func (c *countingNormals) AddGaussian([]float64, float64) error {
	c.t.Error("AddGaussian called on a NormalFiller")
	return nil
}

// TestDPSGDNormalFiller checks how a run uses a NormalFiller: step t adds
// sigma C z to its sum with z the next d draws of the block, and a block
// with fewer than d draws left is dropped for a fresh one. With no
// regularization and w_1 = 0, w_{t+1} = w_t - (eta/b)(sum_t + sigma C
// z_t), which gives z_t back from the hook's sums and weights.
func TestDPSGDNormalFiller(t *testing.T) {
	cfg := dpsgdConfig()
	cfg.Reg = regularizers.ElasticNet{}
	cfg.Batch, cfg.Passes = 2, 3 // 300 steps: the block of 1024 serves 204 steps of d = 5
	X, y := synthData(200, 5, 0, 3)
	const sigma = 1e-3
	std := sigma * cfg.Clip
	noise := &countingNormals{t: t}
	var prevW, prevSum []float64
	checked := 0
	trainDP(t, cfg, X, y, DPSGD{NoiseMultiplier: sigma, Noise: noise, Coins: rand.NewPCG(2, 2)}, func(step int, w []float64, _ []int, sum []float64) {
		if step > 1 {
			// The draws of step s = step-1: 5(s-1) + i in the first
			// block, and from 1024 on in the second.
			s := step - 1
			first := 5 * (s - 1)
			if s > normalBlock/5 {
				first = normalBlock + 5*(s-1-normalBlock/5)
			}
			for i := range w {
				z := ((prevW[i]-w[i])*float64(cfg.Batch)/cfg.Eta - prevSum[i]) / std
				if want := float64(first + i); math.Abs(z-want) > 1e-6*max(1, want) {
					t.Fatalf("step %d, coordinate %d: noise %v sigma C, want draw %v", s, i, z, want)
				}
			}
			checked++
		}
		prevW, prevSum = slices.Clone(w), slices.Clone(sum)
	})
	if checked < normalBlock/5+5 || noise.fills != 2 {
		t.Fatalf("%d steps checked, %d blocks drawn: the test does not reach a second block", checked, noise.fills)
	}
}

// TestDPSGDBatchesAhead checks that a run, which draws its batches steps
// ahead of their use, uses the batches of a sampler on the same coins in
// their order, at b = 1 and aheadBatch (aheadSteps ahead) and b = 20 (one
// step ahead).
func TestDPSGDBatchesAhead(t *testing.T) {
	X, y := synthData(200, 5, 0, 3)
	for _, b := range []int{1, aheadBatch, 20} {
		cfg := dpsgdConfig()
		cfg.Batch, cfg.Passes = b, 1
		var got [][]int
		trainDP(t, cfg, X, y, DPSGD{NoiseMultiplier: 1, Noise: zeroNoise{}, Coins: rand.NewPCG(4, 4)}, func(_ int, _ []float64, batch []int, _ []float64) {
			got = append(got, slices.Clone(batch))
		})
		s := NewPoissonSampler(rand.NewPCG(4, 4), 200, b)
		empty := 0
		for step, batch := range got {
			want := s.Sample(nil)
			if !slices.Equal(batch, want) {
				t.Fatalf("b = %d, step %d: batch %v, the sampler's %v", b, step+1, batch, want)
			}
			if len(want) == 0 {
				empty++
			}
		}
		if want := (200 + b - 1) / b; len(got) != want || b == 1 && empty == 0 {
			t.Fatalf("b = %d: %d steps (%d empty), want %d and empty ones at b = 1", b, len(got), empty, want)
		}
	}
}

// TestDPSGDNoisyUpdateBits checks that the steps of a run (noisyUpdate and
// noisyOneRow for a NormalFiller, update after AddGaussian for a noise
// that is not one) give the bits of the clipped sum, the noise added to
// it and Step.Update, step by step (unfused), with the elastic net's
// decay and soft thresholding, the projection and the average of the
// iterates, at b = 1 (steps of no row, one row and more) and b = 20, on
// rows of 7 features (not a multiple of 4) of which one is 0 everywhere.
func TestDPSGDNoisyUpdateBits(t *testing.T) {
	X, y := synthData(200, 7, 0, 3)
	for i := range 200 {
		X.Set(i, 2, 0)
	}
	for _, filler := range []bool{true, false} {
		for _, b := range []int{1, 20} {
			cfg := dpsgdConfig()
			cfg.Batch, cfg.Radius, cfg.Average = b, 0.8, true
			run := func(unfused bool) ([]float64, []float64) {
				p := newTestProblem(t, cfg, X, y)
				var noise GaussianNoise = seededNoise{rand.New(rand.NewPCG(6, 6))}
				if filler {
					noise = seededFiller{rand.New(rand.NewPCG(6, 6))}
				}
				r := newDPSGDRun(p, DPSGD{NoiseMultiplier: 0.7, Noise: noise, Coins: rand.NewPCG(7, 7)})
				r.unfused = unfused
				for step := 1; step <= r.steps; step++ {
					if err := r.step(step); err != nil {
						t.Fatal(err)
					}
				}
				return r.w, r.avg
			}
			w, avg := run(false)
			wRef, avgRef := run(true)
			if !sameBits(w, wRef) || !sameBits(avg, avgRef) {
				t.Errorf("b = %d, NormalFiller %v: the run gives %v (average %v), step by step %v (%v)", b, filler, w, avg, wRef, avgRef)
			}
		}
	}
}

// seededFiller is a NormalFiller from a seeded generator (the tests' own).
type seededFiller struct{ r *rand.Rand }

func (s seededFiller) FillNormal(z []float64) {
	for i := range z {
		z[i] = s.r.NormFloat64()
	}
}

func (s seededFiller) AddGaussian(w []float64, sigma float64) error {
	return seededNoise{s.r}.AddGaussian(w, sigma)
}

// mergeConfig is a small DP-SGD setting whose noise merges (no L1 part,
// no projection, the last iterate) at b = 1 of n rows: about a third of
// the steps have no row, and the decay a = 1 - eta lambda = 0.5 weighs
// the noises of a wait unequally.
func mergeConfig() Config {
	return Config{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: 1}, Eta: 0.5, Batch: 1, Passes: 3, Clip: 0.5, Seed: 7}
}

// finalWeights runs DP-SGD on p runs times and returns the weights of
// each run: merging the noise of the steps without rows (as TrainDPSGD
// does), or step by step. The runs share one sampler and one noise, whose
// draws are independent from run to run: independent runs.
func finalWeights(t *testing.T, p *problem, priv DPSGD, merged bool, runs int) [][]float64 {
	t.Helper()
	r := newDPSGDRun(p, priv)
	if !r.merge {
		t.Fatal("the run does not merge its noise")
	}
	r.unfused = !merged // addNoise and Step.Update every step
	var out [][]float64
	for range runs {
		clear(r.w)
		for step := 1; step <= r.steps; step++ {
			if err := r.step(step); err != nil {
				t.Fatal(err)
			}
		}
		r.settle()
		out = append(out, slices.Clone(r.w))
	}
	return out
}

// TestDPSGDMergedLaw checks that merging the noise of the steps without
// rows keeps the law of the weights a run returns: 40,000 seeded runs
// (18 steps at b = 1 of 6 rows, about 6 of them without a row) each way,
// and for each weight a two-sample Kolmogorov-Smirnov test at level 1e-4
// (Wei & Dudley 2012: for m = n >= 458 samples, P(D > t) <= 2 exp(-n
// t^2)); at the constant step, at the inverse-t step (its first decay
// 0, and a decay and a noise that change every step: a mix-up of two
// steps' constants changes the variance) and for softmax (3 classes, 6
// weights). With 10 tests, a false rejection at most 1e-3. The same test
// must reject the step-by-step law with a noise multiplier 1.1 times
// larger: it has the power to see a wrong variance. Deterministic
// (seeded).
func TestDPSGDMergedLaw(t *testing.T) {
	for _, tc := range []struct {
		name    string
		classes int
		edit    func(*Config)
	}{
		{"constant", 0, func(*Config) {}},
		{"inverse-t", 0, func(c *Config) { c.Schedule = InverseT }},
		{"softmax", 3, func(c *Config) { c.Loss, c.Classes = losses.Softmax{}, 3 }},
	} {
		X, y := synthData(6, 2, tc.classes, 3)
		cfg := mergeConfig()
		tc.edit(&cfg)
		p := newTestProblem(t, cfg, X, y)
		const runs, alpha = 40000, 1e-4
		draw := func(merged bool, sigma float64, seed uint64) [][]float64 {
			w := make([][]float64, p.k*p.d)
			priv := DPSGD{NoiseMultiplier: sigma, Noise: seededFiller{rand.New(rand.NewPCG(seed, 1))}, Coins: rand.NewPCG(seed, 2)}
			for _, v := range finalWeights(t, p, priv, merged, runs) {
				for j := range w {
					w[j] = append(w[j], v[j])
				}
			}
			return w
		}
		crit := math.Sqrt(math.Log(2/alpha) / runs)
		merged, stepwise, wider := draw(true, 1, 1), draw(false, 1, 3), draw(false, 1.1, 5)
		for j := range merged {
			if d := twoSampleKS(merged[j], stepwise[j]); d > crit {
				t.Errorf("%s, weight %d: KS D = %v > %v between the merged and the step-by-step runs", tc.name, j, d, crit)
			}
			if d := twoSampleKS(wider[j], stepwise[j]); d <= crit {
				t.Errorf("%s, weight %d: KS D = %v <= %v against 1.1 times the noise: the test has no power", tc.name, j, d, crit)
			}
		}
	}
}

// twoSampleKS returns sup_x |F_a(x) - F_b(x)| of two samples of one size
// (sorted in place).
func twoSampleKS(a, b []float64) float64 {
	slices.Sort(a)
	slices.Sort(b)
	var d float64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		x := min(a[i], b[j])
		for i < len(a) && a[i] == x {
			i++
		}
		for j < len(b) && b[j] == x {
			j++
		}
		d = max(d, math.Abs(float64(i)/float64(len(a))-float64(j)/float64(len(b))))
	}
	return d
}

// TestDPSGDMergedZeroNoise checks the deterministic part of a merging
// run: with normals that are all zero it returns, within rounding, the
// weights of the step-by-step run without noise (the decays of the steps
// without rows applied through the scale), at b = 1 with a clipping norm
// that binds, and for softmax.
func TestDPSGDMergedZeroNoise(t *testing.T) {
	for _, classes := range []int{0, 3} {
		X, y := synthData(40, 4, classes, 3)
		cfg := mergeConfig()
		cfg.Clip = 0.05
		if classes > 0 {
			cfg.Loss, cfg.Classes = losses.Softmax{}, classes
		}
		p := newTestProblem(t, cfg, X, y)
		got := finalWeights(t, p, DPSGD{NoiseMultiplier: 1, Noise: zeroFiller{}, Coins: rand.NewPCG(8, 8)}, true, 1)[0]
		want := finalWeights(t, p, DPSGD{NoiseMultiplier: 1, Noise: zeroFiller{}, Coins: rand.NewPCG(8, 8)}, false, 1)[0]
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) || want[i] == 0 {
				t.Errorf("%d classes, weight %d: merged %v, step by step %v", classes, i, got[i], want[i])
			}
		}
	}
}

// zeroFiller is a NormalFiller whose normals are all zero.
type zeroFiller struct{ zeroNoise }

func (zeroFiller) FillNormal(z []float64) { clear(z) }

// TestDPSGDMergeGate checks which runs of TrainDPSGD merge the noise of
// the steps without rows: with a NormalFiller, no L1 part, no projection
// and the last iterate it returns the bits of the merging run settled at
// its end; with an L1 part, a projection or the average of the iterates
// (maps that are not affine, or iterates that are read) the bits of the
// step-by-step run, whose noise a merge would change.
func TestDPSGDMergeGate(t *testing.T) {
	X, y := synthData(40, 4, 0, 3)
	for _, tc := range []struct {
		name  string
		edit  func(*Config)
		merge bool
	}{
		{"affine", func(*Config) {}, true},
		{"affine, inverse-t", func(c *Config) { c.Schedule = InverseT }, true},
		{"l1 part", func(c *Config) { c.Reg.L1Ratio = 0.5 }, false},
		{"projection", func(c *Config) { c.Radius = 0.3 }, false},
		{"average", func(c *Config) { c.Average = true }, false},
	} {
		cfg := mergeConfig()
		tc.edit(&cfg)
		tr, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		priv := func() DPSGD {
			return DPSGD{NoiseMultiplier: 0.8, Noise: seededFiller{rand.New(rand.NewPCG(9, 9))}, Coins: rand.NewPCG(10, 10)}
		}
		m, _, err := tr.TrainDPSGD(context.Background(), X, y, priv())
		if err != nil {
			t.Fatal(err)
		}
		r := newDPSGDRun(newTestProblem(t, cfg, X, y), priv())
		if r.merge != tc.merge {
			t.Errorf("%s: merge %v, want %v", tc.name, r.merge, tc.merge)
		}
		r.unfused = !tc.merge // the reference: step by step unless it merges
		for step := 1; step <= r.steps; step++ {
			if err := r.step(step); err != nil {
				t.Fatal(err)
			}
		}
		r.settle()
		want := r.w
		if r.avg != nil {
			want = r.avg
		}
		if !sameBits(m.W, want) {
			t.Errorf("%s: TrainDPSGD returns %v, the %s run %v", tc.name, m.W, map[bool]string{true: "merging", false: "step-by-step"}[tc.merge], want)
		}
	}
}
