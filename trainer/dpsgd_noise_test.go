package trainer

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

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

// TestDPSGDBatchesAhead checks that a run at a small expected batch, which
// draws its batches steps ahead of their use, uses the batches of a
// sampler on the same coins in their order, at b = 1 (drawn ahead) and b
// = 20 (not).
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

// TestDPSGDNoisyUpdateBits checks that the fused step of a NormalFiller
// (noisyUpdate) gives the bits of the noise added to the sum followed by
// Step.Update, with the elastic net's decay and soft thresholding, the
// projection and the average of the iterates, at b = 1 and b = 20.
func TestDPSGDNoisyUpdateBits(t *testing.T) {
	X, y := synthData(200, 5, 0, 3)
	for _, b := range []int{1, 20} {
		cfg := dpsgdConfig()
		cfg.Batch, cfg.Radius, cfg.Average = b, 0.8, true
		tr, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		run := func(unfused bool) ([]float64, []float64) {
			p, err := tr.newProblem(X, y)
			if err != nil {
				t.Fatal(err)
			}
			r := newDPSGDRun(p, DPSGD{NoiseMultiplier: 0.7, Noise: seededFiller{rand.New(rand.NewPCG(6, 6))}, Coins: rand.NewPCG(7, 7)})
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
			t.Errorf("b = %d: the fused step gives %v (average %v), the noise then Step.Update %v (%v)", b, w, avg, wRef, avgRef)
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
