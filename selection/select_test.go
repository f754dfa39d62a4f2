package selection

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// bestOfLaw returns the exact law of the best of K runs of a run with the
// law q on ordered outcomes 0 < 1 < ... (q sums to 1), K with the law pk
// (pk[i] = P[K = i+1]): P[best <= y] = sum_k P[K = k] F(y)^k.
func bestOfLaw(q, pk []float64) []float64 {
	out := make([]float64, len(q))
	var F, prev float64
	for y := range q {
		F += q[y]
		var G float64
		for i, p := range pk {
			G += p * math.Pow(F, float64(i+1))
		}
		out[y] = G - prev
		prev = G
	}
	return out
}

// maxLogRatio returns the largest |log(a/b)| over the outcomes.
func maxLogRatio(a, b []float64) float64 {
	var m float64
	for i := range a {
		if a[i] > 0 || b[i] > 0 {
			m = math.Max(m, math.Abs(math.Log(a[i]/b[i])))
		}
	}
	return m
}

// neighbourRuns returns the laws of an eps-DP run on two neighbours over
// three ordered outcomes (low, middle, high), built to stress the
// selection: the neighbour moves mass from the low outcome to the top one
// at the full ratio e^eps on both.
func neighbourRuns(eps, pHigh float64) (q, q2 []float64) {
	e := math.Exp(eps)
	low := 0.5
	q = []float64{low, 1 - low - pHigh, pHigh}
	q2 = []float64{low / e, 0, pHigh * e}
	q2[1] = 1 - q2[0] - q2[2]
	return q, q2
}

// TestSelectionLawExact computes the law of the best of K ~ TNB(eta, gamma)
// runs exactly for neighbouring eps-DP runs: the privacy loss stays within
// (2 + eta) eps, the bound of Select's proof, and exceeds eps (the
// selection does cost more than one run). The negative control, a fixed
// number of runs equal to E[K], exceeds (2 + eta) eps.
func TestSelectionLawExact(t *testing.T) {
	const eps = 0.3
	for _, eta := range []float64{0, 1e-9, 0.5, 1} {
		gamma, err := tnbGamma(eta, 40)
		if err != nil {
			t.Fatal(err)
		}
		pk := make([]float64, 200_000)
		tnbPMF(eta, gamma, pk)
		var total, mean float64
		for i, p := range pk {
			total += p
			mean += float64(i+1) * p
		}
		if math.Abs(total-1) > 1e-6 || math.Abs(mean/40-1) > 1e-3 {
			t.Fatalf("eta %v: pmf sums to %v with mean %v, want 1 and 40", eta, total, mean)
		}
		bound := (2 + eta) * eps
		var worst float64
		for _, pHigh := range []float64{1e-4, 1e-3, 1e-2, 0.05} {
			q, q2 := neighbourRuns(eps, pHigh)
			if l := maxLogRatio(q, q2); l > eps+1e-12 {
				t.Fatalf("the run itself has loss %v > eps", l)
			}
			worst = math.Max(worst, maxLogRatio(bestOfLaw(q, pk), bestOfLaw(q2, pk)))
		}
		if worst > bound*(1+1e-6) {
			t.Errorf("eta %v: privacy loss %v > (2 + eta) eps = %v", eta, worst, bound)
		}
		if worst-eps <= 0.2*(bound-eps) {
			t.Errorf("eta %v: privacy loss %v: the stress case does not stress (the best of K adds less than a fifth of what the bound allows above eps)", eta, worst)
		}
		// Negative control: 40 runs always.
		fixed := make([]float64, 40)
		fixed[39] = 1
		q, q2 := neighbourRuns(eps, 1e-3)
		if l := maxLogRatio(bestOfLaw(q, fixed), bestOfLaw(q2, fixed)); l <= bound {
			t.Errorf("eta %v: a fixed number of runs has loss %v <= %v: the test has no teeth", eta, l, bound)
		}
		t.Logf("eta %v: gamma %.4g, worst loss %.4f, bound %.4f", eta, gamma, worst, bound)
	}
}

// TestSampleTNB checks the sampler of K against its pmf.
func TestSampleTNB(t *testing.T) {
	for _, eta := range []float64{0, 1e-9, 1} {
		gamma, err := tnbGamma(eta, 8)
		if err != nil {
			t.Fatal(err)
		}
		pk := make([]float64, 10)
		tnbPMF(eta, gamma, pk)
		rng := rand.New(rand.NewPCG(1, uint64(10*eta)))
		const n = 200_000
		counts := make([]float64, len(pk))
		var sum float64
		for range n {
			k := sampleTNB(eta, gamma, rng.Float64)
			sum += float64(k)
			if k <= len(counts) {
				counts[k-1]++
			}
		}
		for i, p := range pk {
			if se := math.Sqrt(p * (1 - p) / n); math.Abs(counts[i]/n-p) > 5*se {
				t.Errorf("eta %v: P[K = %d] = %.4f, sampled %.4f", eta, i+1, p, counts[i]/n)
			}
		}
		if m := sum / n; math.Abs(m/8-1) > 0.05 {
			t.Errorf("eta %v: mean %v, want 8", eta, m)
		}
	}
}

// selectData returns rows in the unit ball with labels -1/+1 along the first
// feature, and a bias feature.
func selectData(n int, seed uint64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	X := mat.NewDense(n, 3, nil)
	y := make([]float64, n)
	for i := range n {
		y[i] = float64(2*(i%2) - 1)
		X.Set(i, 0, (0.4*y[i]+0.2*rng.NormFloat64())/math.Sqrt2)
		X.Set(i, 1, 0.3*rng.NormFloat64()/math.Sqrt2)
		X.Set(i, 2, 1/math.Sqrt2)
	}
	return X, y
}

// selectCandidates trains one candidate per lambda; a negative lambda
// trains on the negated labels with |lambda|, a candidate that is mostly
// wrong.
func selectCandidates(t *testing.T, X mat.Matrix, y []float64, lambdas ...float64) ([]Candidate, []*release.Trained) {
	t.Helper()
	var cands []Candidate
	var trs []*release.Trained
	for _, l := range lambdas {
		labels := y
		if l < 0 {
			labels = make([]float64, len(y))
			for i := range y {
				labels[i] = -y[i]
			}
			l = -l
		}
		tr, err := release.TrainRows(context.Background(), X, labels, trainer.Config{Loss: losses.Logistic{}, Reg: regularizers.ElasticNet{Lambda: l},
			Kappa: 1, Schedule: trainer.BoundedInverseT, Passes: 3, Seed: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cands = append(cands, FromTrained("lambda "+strconv.FormatFloat(l, 'g', -1, 64), tr, perturb.Gamma))
		trs = append(trs, tr)
	}
	return cands, trs
}

func rowsOf(X *mat.Dense, y []float64, idx []int) (*mat.Dense, []float64) {
	_, d := X.Dims()
	out := mat.NewDense(len(idx), d, nil)
	ys := make([]float64, len(idx))
	for r, i := range idx {
		out.SetRow(r, X.RawRowView(i))
		ys[r] = y[i]
	}
	return out, ys
}

func TestSelectLedgerAndChoice(t *testing.T) {
	X, y := selectData(2000, 1)
	tr, val, err := ValidationSplit(2000, 0.2, 7)
	if err != nil {
		t.Fatal(err)
	}
	Xtr, ytr := rowsOf(X, y, tr)
	Xv, yv := rowsOf(X, y, val)
	// The second candidate learnt the negated labels.
	cands, _ := selectCandidates(t, Xtr, ytr, 1e-2, -1e-2)
	chosen := 0
	for s := range 20 {
		sel, err := Select(context.Background(), cands, Xv, yv, dp.Budget{Epsilon: 8},
			SelectOptions{Eta: 1, MeanRuns: 200, Noise: perturb.Seeded(uint64(s))})
		if err != nil {
			t.Fatal(err)
		}
		if sel.Index == 0 {
			chosen++
		}
		c := sel.Certificate
		if len(c.Ledger) != 2 || math.Abs(c.Ledger[0].Epsilon+c.Ledger[1].Epsilon-8) > 1e-12 || c.Epsilon != 8 ||
			math.Abs(c.Ledger[1].Epsilon-8.0/3) > 1e-12 || c.Private || c.NoiseSeed == nil || *c.NoiseSeed != uint64(s) {
			t.Fatalf("certificate: eps %v, ledger %+v, private %v", c.Epsilon, c.Ledger, c.Private)
		}
		if !strings.Contains(strings.Join(c.Assumptions, "\n"), "Papernot & Steinke") {
			t.Errorf("the certificate does not state the composition rule: %v", c.Assumptions)
		}
	}
	if chosen < 19 {
		t.Errorf("the good candidate was chosen %d times of 20", chosen)
	}
	// Seeded selections are reproducible and leave the weights; a secure
	// one uses them up.
	a, _ := Select(context.Background(), cands, Xv, yv, dp.Budget{Epsilon: 1}, SelectOptions{Noise: perturb.Seeded(9)})
	b, _ := Select(context.Background(), cands, Xv, yv, dp.Budget{Epsilon: 1}, SelectOptions{Noise: perturb.Seeded(9)})
	if a.Index != b.Index || a.Score != b.Score || a.Model.W[0] != b.Model.W[0] {
		t.Error("a seeded selection is not reproducible")
	}
	sel, err := Select(context.Background(), cands, Xv, yv, dp.Budget{Epsilon: 1}, SelectOptions{})
	if err != nil || !sel.Certificate.Private {
		t.Fatalf("secure selection: %v", err)
	}
	if _, err := Select(context.Background(), cands, Xv, yv, dp.Budget{Epsilon: 1}, SelectOptions{}); !errors.Is(err, release.ErrReleased) {
		t.Errorf("a second selection of used-up candidates: %v, want release.ErrReleased", err)
	}
}

func TestSelectErrors(t *testing.T) {
	X, y := selectData(200, 2)
	cands, trs := selectCandidates(t, X, y, 1e-2)
	gauss := []Candidate{FromTrained("g", trs[0], perturb.AnalyticGaussian)}
	ctx := context.Background()
	for name, err := range map[string]error{
		"no candidates":   second(Select(ctx, nil, X, y, dp.Budget{Epsilon: 1}, SelectOptions{})),
		"delta":           second(Select(ctx, cands, X, y, dp.Budget{Epsilon: 1, Delta: 1e-5}, SelectOptions{})),
		"zero eps":        second(Select(ctx, cands, X, y, dp.Budget{}, SelectOptions{})),
		"gaussian":        second(Select(ctx, gauss, X, y, dp.Budget{Epsilon: 1}, SelectOptions{})),
		"eta":             second(Select(ctx, cands, X, y, dp.Budget{Epsilon: 1}, SelectOptions{Eta: 2})),
		"negative eta":    second(Select(ctx, cands, X, y, dp.Budget{Epsilon: 1}, SelectOptions{Eta: -0.5})),
		"mean too large":  second(Select(ctx, cands, X, y, dp.Budget{Epsilon: 1}, SelectOptions{MeanRuns: 1e5})),
		"mean runs":       second(Select(ctx, cands, X, y, dp.Budget{Epsilon: 1}, SelectOptions{MeanRuns: 0.5})),
		"no validation":   second(Select(ctx, cands, nil, nil, dp.Budget{Epsilon: 1}, SelectOptions{})),
		"labels mismatch": second(Select(ctx, cands, X, y[:10], dp.Budget{Epsilon: 1}, SelectOptions{})),
		"dims":            second(Select(ctx, cands, mat.NewDense(1, 2, nil), []float64{1}, dp.Budget{Epsilon: 1}, SelectOptions{})),
	} {
		if !errors.Is(err, ErrSelect) {
			t.Errorf("%s: %v, want ErrSelect", name, err)
		}
	}
	if _, _, err := ValidationSplit(10, 1, 1); !errors.Is(err, ErrSelect) {
		t.Errorf("validation fraction 1: %v", err)
	}
	// Nothing was used up by the refusals.
	if _, err := trs[0].Reveal(); err != nil {
		t.Errorf("a refused selection used up the weights: %v", err)
	}
}

func second[A any](_ A, err error) error { return err }

// TestSelectNeighbourValidation runs Select on two validation sets that
// differ in one row and compares the laws of the chosen candidate: their
// ratio stays within e^eps up to sampling error (the exact law and its
// negative control are in TestSelectionLawExact).
func TestSelectNeighbourValidation(t *testing.T) {
	X, y := selectData(400, 5)
	cands, _ := selectCandidates(t, X, y, 3e-2, -3e-2)
	// Ten validation rows; the neighbour flips the label of one.
	Xv, yv := rowsOf(X, y, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	yv2 := append([]float64(nil), yv...)
	yv2[0] = -yv2[0]
	const eps, n = 1.0, 3000
	freq := func(yv []float64, seed uint64) float64 {
		var c float64
		for s := range n {
			sel, err := Select(context.Background(), cands, Xv, yv, dp.Budget{Epsilon: eps},
				SelectOptions{Noise: perturb.Seeded(seed + uint64(s)), MeanRuns: 6})
			if err != nil {
				t.Fatal(err)
			}
			if sel.Index == 0 {
				c++
			}
		}
		return c / n
	}
	p, p2 := freq(yv, 0), freq(yv2, 1<<32)
	for _, pr := range [][2]float64{{p, p2}, {1 - p, 1 - p2}} {
		se := math.Sqrt(pr[0]*(1-pr[0])/n) + math.Sqrt(pr[1]*(1-pr[1])/n)
		if pr[0] > math.Exp(eps)*pr[1]+4*se*math.Exp(eps) || pr[1] > math.Exp(eps)*pr[0]+4*se*math.Exp(eps) {
			t.Errorf("P[choice] %v vs %v on neighbours: ratio above e^eps = %v", pr[0], pr[1], math.Exp(eps))
		}
	}
	t.Logf("P[candidate 0] = %.3f vs %.3f", p, p2)
}

// namedSource is a caller's noise source: seeded draws under another Kind.
type namedSource struct{ perturb.Source }

func (namedSource) Kind() string { return "caller's hardware source" }

// TestSelectRobustness: concurrent selections over shared candidates in
// opposite orders finish (a hold takes its candidates all at once); a caller's source uses
// the weights up and records no seed; the ledger adds up to eps exactly;
// the certificate states the selection's neighbours and the validation
// assumption; a zero Trained value and a typed nil matrix are errors.
func TestSelectRobustness(t *testing.T) {
	X, y := selectData(400, 21)
	cands, trs := selectCandidates(t, X, y, 1e-2, 3e-2)
	rev := []Candidate{cands[1], cands[0]}
	ctx := context.Background()
	done := make(chan error, 2)
	for i, cs := range [][]Candidate{cands, rev} {
		go func() {
			for s := range 100 {
				_, err := Select(ctx, cs, X, y, dp.Budget{Epsilon: 1}, SelectOptions{MeanRuns: 4, Noise: perturb.Seeded(uint64(2*s + i))})
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	timeout := time.After(60 * time.Second)
	for range 2 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-timeout:
			t.Fatal("selections over the same candidates in opposite orders did not finish: deadlock")
		}
	}

	rng := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		eps, eta := math.Exp(8*rng.Float64()-6), rng.Float64()
		r := runBudget(eps, eta)
		ledger := []dp.Charge{{Epsilon: dp.Rest(eps, r)}, {Epsilon: r}}
		if (eps-r)+r != eps || !claimWithin(eta, r, eps) || (dp.Budget{Epsilon: eps}).Covers(ledger) != nil || r < eps/(2+eta)*(1-1e-15) {
			t.Fatalf("eps %v, eta %v: eps_run %v: parts %v + %v", eps, eta, r, eps-r, r)
		}
	}
	for _, eps := range []float64{0.03, 0.1, 0.7, 0.9675053857934467, 3.3} {
		for _, eta := range []float64{0, 0.2290654765699549, 0.3, 1} {
			sel, err := Select(ctx, cands, X, y, dp.Budget{Epsilon: eps}, SelectOptions{Eta: eta, MeanRuns: 3, Noise: perturb.Seeded(1)})
			if err != nil {
				t.Fatal(err)
			}
			c := sel.Certificate
			if c.Ledger[0].Epsilon+c.Ledger[1].Epsilon != eps {
				t.Errorf("eps %v, eta %v: ledger %v + %v != eps", eps, eta, c.Ledger[0].Epsilon, c.Ledger[1].Epsilon)
			}
			if c.Neighbouring != SelectNeighbours || !strings.Contains(strings.Join(c.Assumptions, "\n"), "assumed disjoint") {
				t.Errorf("neighbours %q, assumptions %v", c.Neighbouring, c.Assumptions)
			}
		}
	}

	sel, err := Select(ctx, cands, X, y, dp.Budget{Epsilon: 1}, SelectOptions{MeanRuns: 3, Noise: namedSource{perturb.Seeded(3)}})
	if err != nil {
		t.Fatal(err)
	}
	if sel.Certificate.NoiseSeed != nil {
		t.Errorf("a caller's source recorded the seed %v", *sel.Certificate.NoiseSeed)
	}
	if _, _, err := trs[0].Release(perturb.Gamma, 1, 0, nil); !errors.Is(err, release.ErrReleased) {
		t.Errorf("a release after a selection with a caller's source: %v, want release.ErrReleased", err)
	}

	var nilDense *mat.Dense
	fresh, _ := selectCandidates(t, X, y, 1e-2)
	for name, err := range map[string]error{
		"zero Trained":   second(Select(ctx, []Candidate{FromTrained("z", &release.Trained{}, perturb.Gamma)}, X, y, dp.Budget{Epsilon: 1}, SelectOptions{})),
		"typed nil Xval": second(Select(ctx, fresh, nilDense, y, dp.Budget{Epsilon: 1}, SelectOptions{})),
		"nil SymDense":   second(Select(ctx, fresh, (*mat.SymDense)(nil), y, dp.Budget{Epsilon: 1}, SelectOptions{})),
		"nil transpose":  second(Select(ctx, fresh, mat.Transpose{Matrix: nilDense}, y, dp.Budget{Epsilon: 1}, SelectOptions{})),
	} {
		if !errors.Is(err, ErrSelect) {
			t.Errorf("%s: %v, want ErrSelect", name, err)
		}
	}
}

// cancelOnRun cancels its context at its third uniform draw: after K and
// the first two candidate indices, so during the second run.
type cancelOnRun struct {
	perturb.Source
	draws  int
	cancel context.CancelFunc
}

func (c *cancelOnRun) Uniform() float64 {
	if c.draws++; c.draws == 3 {
		c.cancel()
	}
	return c.Source.Uniform()
}

func (*cancelOnRun) Kind() string { return "caller's source" }

// TestSelectUsedUpOnError: a selection stopped after its first run (here by
// a cancelled context) still uses the weights up, unless it is seeded.
func TestSelectUsedUpOnError(t *testing.T) {
	X, y := selectData(300, 31)
	cands, trs := selectCandidates(t, X, y, 1e-2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := &cancelOnRun{Source: perturb.Seeded(1), cancel: cancel}
	if _, err := Select(ctx, cands, X, y, dp.Budget{Epsilon: 1}, SelectOptions{Eta: 1, MeanRuns: 1000, Noise: src}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled selection: %v", err)
	}
	if _, _, err := trs[0].Release(perturb.Gamma, 1, 0, nil); !errors.Is(err, release.ErrReleased) {
		t.Errorf("a release after a stopped selection: %v, want release.ErrReleased", err)
	}
}

// TestSampleTNBSaturated draws K with the largest uniform float64 returns
// first: the inversion's sum saturates below it, the draw is repeated, and
// the sampler returns (it looped forever when it waited for p to reach 0).
func TestSampleTNBSaturated(t *testing.T) {
	for _, c := range []struct{ eta, mean float64 }{{0, 100}, {1, 100}, {1, 1e6}, {0.3, 1000}, {0, 2}} {
		gamma, err := tnbGamma(c.eta, c.mean)
		if err != nil {
			t.Fatal(err)
		}
		draws := []float64{1 - 0x1p-53, 0.5}
		i := 0
		uniform := func() float64 { u := draws[min(i, len(draws)-1)]; i++; return u }
		done := make(chan int, 1)
		go func() { done <- sampleTNB(c.eta, gamma, uniform) }()
		select {
		case k := <-done:
			if k < 1 {
				t.Errorf("eta %v, mean %v: K = %d", c.eta, c.mean, k)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("eta %v, mean %v: the sampler did not return", c.eta, c.mean)
		}
	}
}

// TestSelectKeepsWeightsWithoutRun: a selection refused before its first
// run (a cancelled ctx, an eps the mechanism cannot calibrate) leaves the
// weights, which a later release may still use; a positive eta below
// minEta is refused.
func TestSelectKeepsWeightsWithoutRun(t *testing.T) {
	X, y := selectData(200, 51)
	cands, trs := selectCandidates(t, X, y, 1e-2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Select(ctx, cands, X, y, dp.Budget{Epsilon: 1}, SelectOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before the first run: %v", err)
	}
	if _, err := Select(context.Background(), cands, X, y, dp.Budget{Epsilon: 1e-310}, SelectOptions{}); !errors.Is(err, ErrSelect) {
		t.Errorf("eps 1e-310: %v, want ErrSelect before any run", err)
	}
	if _, err := Select(context.Background(), cands, X, y, dp.Budget{Epsilon: 1}, SelectOptions{Eta: 1e-320}); !errors.Is(err, ErrSelect) {
		t.Errorf("eta 1e-320: %v, want ErrSelect", err)
	}
	if _, _, err := trs[0].Release(perturb.Gamma, 1, 0, nil); err != nil {
		t.Errorf("the weights were used up by selections that never ran: %v", err)
	}
}
