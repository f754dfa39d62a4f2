package pdp

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/glm"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/pdp/internal/pdptest"
)

// TestExactMatchesRetraining checks that the exact sensitivity (Newton
// refinement and Lemma 13's identity) equals retraining from scratch on the
// neighbour to 1e-8, for removal and for an added target, for every
// built-in loss (losses.All; K = 3 for a multiclass one), and that the
// one-step estimate is exact for ridge regression.
func TestExactMatchesRetraining(t *testing.T) {
	type exactCase struct {
		name    string
		loss    losses.Loss
		classes int
		lambda  float64
	}
	var cases []exactCase
	for _, l := range losses.All() {
		classes := 0
		if l.Task() == losses.Multiclass {
			classes = 3
		}
		cases = append(cases, exactCase{l.Name(), l, classes, 1e-2})
	}
	// Settings beyond the defaults: a small lambda (a flat objective), a
	// Huber threshold the residuals cross often, ridge at a small lambda.
	hub, _ := losses.NewHuber(0.5)
	cases = append(cases,
		exactCase{"logistic-small-lambda", losses.Logistic{}, 0, 1e-4},
		exactCase{"huber-0.5", hub, 0, 1e-2},
		exactCase{"squared-small-lambda", losses.Squared{}, 0, 1e-3},
	)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const n, d = 300, 5
			x, y := pdptest.Synth(n, d, tc.loss, tc.classes, 11)
			cfg := Config{Loss: tc.loss, Classes: tc.classes, Lambda: tc.lambda}
			a := mustAnalysis(t, x, y, cfg)
			if gn := a.Solution().GradNorm; gn > DefaultTolerance {
				t.Fatalf("grad norm %g", gn)
			}
			all, err := a.RemoveAll()
			if err != nil {
				t.Fatal(err)
			}
			for _, i := range []int{0, 17, 123, n - 1} {
				ex, err := a.RemoveExact(i)
				if err != nil {
					t.Fatal(err)
				}
				xo, yo := pdptest.Without(x, y, i)
				ref, err := Solve(xo, yo, Config{Loss: tc.loss, Classes: tc.classes, Lambda: tc.lambda, N: n})
				if err != nil {
					t.Fatal(err)
				}
				want := make([]float64, len(ref.W))
				for k := range want {
					want[k] = ref.W[k] - a.Solution().W[k]
				}
				if e := pdptest.Dist(ex.V, want); e > 1e-8 {
					t.Errorf("row %d: exact difference off retraining by %g (Delta %g)", i, e, ex.L2)
				}
				if ex.IdentityGap > 1e-8 {
					t.Errorf("row %d: Lemma 13 identity gap %g", i, ex.IdentityGap)
				}
				one := all[i]
				if tc.loss.Name() == "squared" {
					if e := pdptest.Dist(one.V, want); e > 1e-10*(1+ex.L2) {
						t.Errorf("row %d: ridge one-step off by %g, want exact", i, e)
					}
				}
				if ex.L2 == 0 && one.L2 == 0 {
					continue // a row with zero loss gradient (huber-hinge beyond its band)
				}
				if r := one.L2 / ex.L2; !(r > 0.5 && r < 2) {
					t.Errorf("row %d: one-step %g vs exact %g", i, one.L2, ex.L2)
				}
			}
			// A target outside the data set.
			tx := append([]float64(nil), x.RawRowView(3)...)
			tx[0] += 0.1
			ty := y[4]
			ex, err := a.AddExact(tx, ty)
			if err != nil {
				t.Fatal(err)
			}
			xa, ya := pdptest.With(x, y, tx, ty)
			ref, err := Solve(xa, ya, Config{Loss: tc.loss, Classes: tc.classes, Lambda: tc.lambda, N: n})
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float64, len(ref.W))
			for k := range want {
				want[k] = ref.W[k] - a.Solution().W[k]
			}
			if e := pdptest.Dist(ex.V, want); e > 1e-8 {
				t.Errorf("add: exact difference off retraining by %g", e)
			}
			if ex.IdentityGap > 1e-8 {
				t.Errorf("add: identity gap %g", ex.IdentityGap)
			}
		})
	}
}

// TestOneStepSecondOrder checks the one-step estimate for the logistic loss
// against its error bound: one Newton step from w_hat on the leave-one-out
// objective misses its minimizer by at most L_H Delta^2 / (2 mu), with
// mu = n lambda and L_H = max|D3l| sum_j ||x_j||^3 the Lipschitz constant
// of the Hessian (max|D3l| = 1/(6 sqrt 3) for the logistic loss).
func TestOneStepSecondOrder(t *testing.T) {
	const n, d, lambda = 400, 6, 1e-2
	x, y := pdptest.Synth(n, d, losses.Logistic{}, 0, 5)
	a := mustAnalysis(t, x, y, Config{Loss: losses.Logistic{}, Lambda: lambda})
	all, err := a.RemoveAll()
	if err != nil {
		t.Fatal(err)
	}
	var cube float64
	for i := 0; i < n; i++ {
		r := norm2(x.RawRowView(i))
		cube += r * r * r
	}
	lh := cube / (6 * math.Sqrt(3))
	mu := float64(n) * lambda
	worst := 0.0
	for i := 0; i < n; i += 7 {
		ex, err := a.RemoveExact(i)
		if err != nil {
			t.Fatal(err)
		}
		bound := lh / (2 * mu) * ex.L2 * ex.L2
		e := pdptest.Dist(all[i].V, ex.V)
		if e > bound*(1+1e-6)+1e-13 {
			t.Errorf("row %d: one-step error %g above its second-order bound %g (Delta %g)", i, e, bound, ex.L2)
		}
		worst = max(worst, e/bound)
	}
	t.Logf("largest error / bound: %.3g", worst)
}

// TestRemoveAllMatchesRemove checks the batched one-step path against the
// single-row one (chunking and goroutines), for K = 1 and K = 3: the path
// depends on the number of outputs, not on the loss, so one loss of each
// shape is listed by hand.
func TestRemoveAllMatchesRemove(t *testing.T) {
	for _, tc := range []struct {
		loss    losses.Loss
		classes int
	}{{losses.Logistic{}, 0}, {losses.Softmax{}, 3}} {
		x, y := pdptest.Synth(2*chunkRows+17, 4, tc.loss, tc.classes, 3)
		a := mustAnalysis(t, x, y, Config{Loss: tc.loss, Classes: tc.classes, Lambda: 1e-3})
		all, err := a.RemoveAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range []int{0, chunkRows - 1, chunkRows, 2*chunkRows + 16} {
			one, err := a.Remove(i)
			if err != nil {
				t.Fatal(err)
			}
			if e := pdptest.Dist(one.V, all[i].V); e > 1e-14 {
				t.Errorf("%s row %d: batched and single differ by %g", tc.loss.Name(), i, e)
			}
		}
	}
}

// TestBadInput checks that the hypotheses of Lemma 13 and the data are
// checked with clear errors.
func TestBadInput(t *testing.T) {
	x, y := pdptest.Synth(50, 3, losses.Logistic{}, 0, 1)
	nan := mat.DenseCopyOf(x)
	nan.Set(4, 1, math.NaN())
	// Rank-deficient rows: the second column is twice the first.
	rd := mat.DenseCopyOf(x)
	for i := 0; i < 50; i++ {
		rd.Set(i, 1, 2*rd.At(i, 0))
	}
	ry := make([]float64, 50)
	for i := range ry {
		ry[i] = x.At(i, 0)
	}
	// Separable classes: the label is the sign of the first feature.
	sep := make([]float64, 50)
	for i := range sep {
		sep[i] = 1
		if x.At(i, 0) < 0 {
			sep[i] = -1
		}
	}
	cases := []struct {
		name string
		x    *mat.Dense
		y    []float64
		cfg  Config
		want error
	}{
		{"l1", x, y, Config{Loss: losses.Logistic{}, Lambda: 1e-2, L1Ratio: 0.15}, ErrNotSmooth},
		{"unverified loss", x, y, Config{Loss: hingeLike{losses.Logistic{}}, Lambda: 1e-2}, ErrNotSmooth},
		{"nan feature", nan, y, Config{Loss: losses.Logistic{}, Lambda: 1e-2}, ErrInput},
		{"nan label", x, append(append([]float64(nil), y[:49]...), math.NaN()), Config{Loss: losses.Squared{}, Lambda: 1e-2}, ErrInput},
		{"bad label", x, ry, Config{Loss: losses.Logistic{}, Lambda: 1e-2}, ErrInput},
		{"negative lambda", x, y, Config{Loss: losses.Logistic{}, Lambda: -1}, ErrInput},
		{"rank deficient", rd, ry, Config{Loss: losses.Squared{}, Lambda: 0}, ErrSingular},
		{"separable", x, sep, Config{Loss: losses.Logistic{}, Lambda: 0}, nil},
		{"shape", x, y[:10], Config{Loss: losses.Logistic{}, Lambda: 1e-2}, ErrInput},
		{"no loss", x, y, Config{Lambda: 1e-2}, ErrInput},
		{"a Hessian too wide to hold", mat.NewDense(2, glm.MaxHessianWeights+1, nil), []float64{-1, 1}, Config{Loss: losses.Logistic{}, Lambda: 1e-2}, ErrInput},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.x, tc.y, tc.cfg)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if tc.want == nil && !errors.Is(err, ErrSingular) && !errors.Is(err, ErrNoConvergence) {
				t.Fatalf("error %v, want singular or no convergence", err)
			}
			t.Log(err)
		})
	}
}

// hingeLike is a loss whose constants do not say it is smooth.
type hingeLike struct{ losses.Logistic }

func (hingeLike) Constants(losses.Domain) (losses.Constants, error) {
	return losses.Constants{Lz: 1, Sz: 0.25, Convex: true}, nil
}

// TestConcurrentExact checks that the exact sensitivities may be computed
// concurrently on one Analysis (run with -race): the same values as one at
// a time.
func TestConcurrentExact(t *testing.T) {
	x, y := pdptest.Synth(200, 4, losses.Logistic{}, 0, 21)
	a := mustAnalysis(t, x, y, Config{Loss: losses.Logistic{}, Lambda: 1e-2})
	target := append([]float64(nil), x.RawRowView(5)...)
	target[0] += 0.2
	want := make([]Diff, 4)
	run := func(j int) (Diff, error) {
		if j%2 == 0 {
			return a.AddExact(target, y[j])
		}
		return a.RemoveExact(j)
	}
	for j := range want {
		d, err := run(j)
		if err != nil {
			t.Fatal(err)
		}
		want[j] = d
	}
	got := make([]Diff, len(want))
	errs := make([]error, len(want))
	done := make(chan int)
	for j := range want {
		go func() { got[j], errs[j] = run(j); done <- j }()
	}
	for range want {
		<-done
	}
	for j := range want {
		if errs[j] != nil || pdptest.Dist(got[j].V, want[j].V) != 0 {
			t.Errorf("call %d: %v, %v off the sequential result", j, errs[j], pdptest.Dist(got[j].V, want[j].V))
		}
	}
}

// TestOneStepBound checks Diff.ErrBound (oneStepBound) against retraining
// on the neighbour, for removal, addition, replacement by a fresh row and
// by the label-flipped copy, on the batched and single paths: the one-step
// difference is within ErrBound of the exact one, for every loss with a
// Lipschitz curvature; a small lambda makes the remainder matter. The
// Huber loss's one-step values are estimates (no bound), and so is every
// value at lambda = 0.
func TestOneStepBound(t *testing.T) {
	hub, _ := losses.NewHuber(0.5)
	for _, tc := range []struct {
		name    string
		loss    losses.Loss
		classes int
		lambda  float64
	}{
		{"logistic", losses.Logistic{}, 0, 1e-3},
		{"logistic-tiny-lambda", losses.Logistic{}, 0, 1e-5},
		{"softmax", losses.Softmax{}, 3, 1e-3},
		{"squared", losses.Squared{}, 0, 1e-3},
		{"huber", hub, 0, 1e-3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n, d = 200, 4
			x, y := pdptest.Synth(n, d, tc.loss, tc.classes, 17)
			cfg := Config{Loss: tc.loss, Classes: tc.classes, Lambda: tc.lambda}
			a := mustAnalysis(t, x, y, cfg)
			all, err := a.RemoveAll()
			if err != nil {
				t.Fatal(err)
			}
			flips, err := a.FlipAll()
			if err != nil {
				t.Fatal(err)
			}
			fx, fy := pdptest.Synth(3, d, tc.loss, tc.classes, 99)
			rows := []int{0, 57, 123}
			reps, err := a.ReplaceAll(rows, fx, fy)
			if err != nil {
				t.Fatal(err)
			}
			adds, err := a.AddAll(fx, fy)
			if err != nil {
				t.Fatal(err)
			}
			ref := Config{Loss: tc.loss, Classes: tc.classes, Lambda: tc.lambda, N: n}
			retrain := func(xo *mat.Dense, yo []float64) []float64 {
				sol, err := Solve(xo, yo, ref)
				if err != nil {
					t.Fatal(err)
				}
				v := make([]float64, len(sol.W))
				for k := range v {
					v[k] = sol.W[k] - a.Solution().W[k]
				}
				return v
			}
			replaced := func(i int, tx []float64, ty float64) (*mat.Dense, []float64) {
				xo, yo := mat.DenseCopyOf(x), append([]float64(nil), y...)
				xo.SetRow(i, tx)
				yo[i] = ty
				return xo, yo
			}
			worst := 0.0
			check := func(what string, one Diff, exact []float64) {
				t.Helper()
				e := pdptest.Dist(one.V, exact)
				if tc.loss.Name() == "huber" {
					if one.Kind() != KindEstimate {
						t.Errorf("%s: huber one-step value of kind %s, want %s", what, one.Kind(), KindEstimate)
					}
					return
				}
				if one.Kind() != KindBound {
					t.Fatalf("%s: kind %s, want %s", what, one.Kind(), KindBound)
				}
				if e > one.ErrBound {
					t.Errorf("%s: one-step error %g above its bound %g (Delta %g)", what, e, one.ErrBound, norm2(exact))
				}
				if up, _, _ := one.Upper(); up < norm2(exact) {
					t.Errorf("%s: upper bound %g below the exact %g", what, up, norm2(exact))
				}
				if one.ErrBound > 0 {
					worst = math.Max(worst, e/one.ErrBound)
				}
				t.Logf("%s: Delta %.3g, one-step error %.3g, bound %.3g", what, norm2(exact), e, one.ErrBound)
			}
			for q, i := range rows {
				xo, yo := pdptest.Without(x, y, i)
				check(fmt.Sprintf("remove %d", i), all[i], retrain(xo, yo))
				single, err := a.Remove(i)
				if err != nil || pdptest.Dist(single.V, all[i].V) > 1e-14 || math.Abs(single.ErrBound-all[i].ErrBound) > 1e-12*all[i].ErrBound {
					t.Errorf("remove %d: single path %v, %v; batched %v", i, single.ErrBound, err, all[i].ErrBound)
				}
				xf, yf := replaced(i, x.RawRowView(i), a.FlipLabel(x.RawRowView(i), y[i]))
				check(fmt.Sprintf("flip %d", i), flips[i], retrain(xf, yf))
				xr, yr := replaced(i, fx.RawRowView(q), fy[q])
				check(fmt.Sprintf("replace %d", i), reps[q], retrain(xr, yr))
				xa, ya := pdptest.With(x, y, fx.RawRowView(q), fy[q])
				check(fmt.Sprintf("add %d", q), adds[q], retrain(xa, ya))
			}
			t.Logf("largest error / bound: %.3g", worst)
			// Exact values carry the solvers' tolerance as their bound.
			ex, err := a.RemoveExact(rows[1])
			if err != nil {
				t.Fatal(err)
			}
			if ex.Kind() != KindExact || !(ex.ErrBound < 1e-4*ex.L2) {
				t.Errorf("exact: kind %s, bound %g", ex.Kind(), ex.ErrBound)
			}
		})
	}
	// lambda = 0: no strong convexity, no bound.
	x, y := pdptest.Synth(200, 4, losses.Logistic{}, 0, 17)
	a := mustAnalysis(t, x, y, Config{Loss: losses.Logistic{}})
	one, err := a.Remove(3)
	if err != nil {
		t.Fatal(err)
	}
	if one.Kind() != KindEstimate {
		t.Errorf("lambda = 0: kind %s, want %s", one.Kind(), KindEstimate)
	}
}

// TestReplaceBoundAdversarial trains on replace-one neighbours built to
// move the minimizer far, and on data sets with an added adversarial
// target, and checks that the realized distance never exceeds the claimed
// bounds: ReplaceBound (each row's bound over every replacement in the
// domain) and AddBoundAll (the data-dependent bound for every target).
// The replacements: the row's label-flipped copy, and rows of norm kappa
// along the eigenvectors of the Hessian (the least curved first) with
// either label; the targets the same. The logistic loss, L_z = 1,
// kappa = 1.
func TestReplaceBoundAdversarial(t *testing.T) {
	const n, d, lambda = 150, 4, 1e-2
	x, y := pdptest.Synth(n, d, losses.Logistic{}, 0, 23)
	cfg := Config{Loss: losses.Logistic{}, Lambda: lambda}
	a := mustAnalysis(t, x, y, cfg)
	all, err := a.RemoveAll()
	if err != nil {
		t.Fatal(err)
	}
	_, addBound, err := WorstCaseSensitivity(1, 1, lambda, n)
	if err != nil {
		t.Fatal(err)
	}
	forAll, err := a.AddBoundAll(addBound * float64(n) * lambda)
	if err != nil {
		t.Fatal(err)
	}
	if forAll > addBound*(1+1e-9) {
		t.Errorf("data-dependent bound %g above the data-independent %g", forAll, addBound)
	}
	var h mat.SymDense
	a.chol.ToSym(&h)
	var es mat.EigenSym
	if !es.Factorize(&h, true) {
		t.Fatal("eigen")
	}
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	var cands [][]float64
	for c := 0; c < d; c++ {
		cands = append(cands, mat.Col(nil, c, &vecs))
	}
	ref := Config{Loss: losses.Logistic{}, Lambda: lambda, N: n}
	w := a.Solution().W
	worstRep, worstAdd := 0.0, 0.0
	for _, i := range []int{0, 41, 99, 149} {
		l2, _ := ReplaceBound(all[i], addBound)
		try := func(tx []float64, ty float64) {
			xr := mat.DenseCopyOf(x)
			xr.SetRow(i, tx)
			yr := append([]float64(nil), y...)
			yr[i] = ty
			sol, err := Solve(xr, yr, ref)
			if err != nil {
				t.Fatal(err)
			}
			dd := pdptest.Dist(sol.W, w)
			if dd > l2 {
				t.Errorf("row %d replaced: moved %g, bound %g", i, dd, l2)
			}
			worstRep = math.Max(worstRep, dd/l2)
		}
		try(x.RawRowView(i), -y[i])
		for _, v := range cands {
			try(v, 1)
			try(v, -1)
		}
	}
	for _, v := range cands {
		for _, ty := range []float64{-1, 1} {
			xa, ya := pdptest.With(x, y, v, ty)
			sol, err := Solve(xa, ya, ref)
			if err != nil {
				t.Fatal(err)
			}
			dd := pdptest.Dist(sol.W, w)
			if dd > forAll {
				t.Errorf("target added: moved %g, bound for all %g", dd, forAll)
			}
			worstAdd = math.Max(worstAdd, dd/forAll)
		}
	}
	t.Logf("largest realized / bound: replace %.3g, add %.3g (data-dependent bound %.4g, worst case %.4g)", worstRep, worstAdd, forAll, addBound)
}
