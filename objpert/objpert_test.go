package objpert

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/glm"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
)

// rows returns n random rows of norm at most 1 (the last coordinate a bias
// 1/sqrt(2)) and labels for k outputs (k = 1: -1/+1).
func rows(n, d, k int, seed uint64) (*mat.Dense, []float64) {
	r := rand.New(rand.NewPCG(seed, 1))
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := range n {
		row := X.RawRowView(i)
		for j := range d - 1 {
			row[j] = r.NormFloat64()
		}
		nr := floats.Norm(row[:d-1], 2)
		floats.Scale(1/(math.Sqrt2*math.Max(nr, 1)), row[:d-1])
		row[d-1] = 1 / math.Sqrt2
		if k == 1 {
			y[i] = 1
			if row[0]+0.3*r.NormFloat64() < 0 {
				y[i] = -1
			}
		} else {
			y[i] = float64(r.IntN(k))
		}
	}
	return X, y
}

func problem(loss losses.Loss, X *mat.Dense, k int, lambda float64) Problem {
	n, d := X.Dims()
	return Problem{Loss: loss, N: n, D: d, K: k, Kappa: 1, Lambda: lambda}
}

func TestRefusals(t *testing.T) {
	hinge, err := losses.NewHuberHinge(0.5)
	if err != nil {
		t.Fatal(err)
	}
	pr := Problem{Loss: losses.Logistic{}, N: 100, D: 5, K: 1, Kappa: 1, Lambda: 0.1}
	for _, tt := range []struct {
		name  string
		m     dp.Mechanism
		eps   float64
		delta float64
		edit  func(*Problem)
		want  error
		msg   string
	}{
		{"huber hinge", perturb.Objective, 1, 0, func(p *Problem) { p.Loss = hinge }, ErrCondition, "smoothness"},
		{"squared", perturb.AMP, 1, 1e-5, func(p *Problem) { p.Loss = losses.Squared{} }, ErrCondition, "smoothness"},
		{"below floor", perturb.Objective, 1, 0, func(p *Problem) { p.Lambda = 1e-4 }, ErrCondition, "lambda floor"},
		{"amp below floor", perturb.AMP, 0.1, 1e-5, func(p *Problem) { p.Lambda = 0.01 }, ErrCondition, "lambda floor"},
		{"lambda 0", perturb.Objective, 1, 0, func(p *Problem) { p.Lambda = 0 }, ErrCondition, "lambda > 0"},
		{"pure with delta", perturb.Objective, 1, 1e-5, nil, ErrBudget, "delta"},
		{"amp without delta", perturb.AMP, 1, 0, nil, ErrBudget, "delta"},
		{"eps 0", perturb.AMP, 0, 1e-5, nil, ErrBudget, "eps"},
		{"output mechanism", perturb.Gamma, 1, 0, nil, ErrMechanism, "gamma"},
	} {
		p := pr
		if tt.edit != nil {
			tt.edit(&p)
		}
		_, err := Calibrate(tt.m, tt.eps, tt.delta, p)
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: %v, want %v naming %q", tt.name, err, tt.want, tt.msg)
		}
	}
	// At the floor the Jacobian part is half of eps; just above it passes.
	c, err := Calibrate(perturb.Objective, 1, 0, pr)
	if err != nil {
		t.Fatal(err)
	}
	p := pr
	p.Lambda = c.LambdaFloor * (1 + 1e-12)
	at, err := Calibrate(perturb.Objective, 1, 0, p)
	// The objective part is 0.99 of eps (0.01 goes to the output noise).
	if err != nil || math.Abs(at.EpsJacobian-0.495) > 1e-9 || math.Abs(at.EpsNoise-0.495) > 1e-9 {
		t.Errorf("at the floor: eps_J = %v, eps_noise = %v, %v; want 0.495 each", at.EpsJacobian, at.EpsNoise, err)
	}
}

// TestAMPBudget checks that the parts of AMP's ledger add up to the budget
// and that the objective part's noise meets its privacy-loss bound.
func TestAMPBudget(t *testing.T) {
	for _, k := range []int{1, 4} {
		loss := losses.Loss(losses.Logistic{})
		if k > 1 {
			loss = losses.Softmax{}
		}
		c, err := Calibrate(perturb.AMP, 0.7, 1e-6, Problem{Loss: loss, N: 1000, D: 8, K: k, Kappa: 1, Lambda: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		var e, d float64
		for _, ch := range c.Ledger() {
			e += ch.Epsilon
			d += ch.Delta
		}
		if math.Abs(e-0.7) > 1e-12 || math.Abs(d-1e-6) > 1e-18 {
			t.Errorf("K = %d: ledger sums to (%v, %v), want (0.7, 1e-6)", k, e, d)
		}
		loss2 := 2*c.L*c.Tail/c.Sigma1 + 2*c.L*c.L/(c.Sigma1*c.Sigma1)
		if math.Abs(loss2-c.EpsNoise) > 1e-12 {
			t.Errorf("K = %d: noise privacy loss %v, want eps_noise %v", k, loss2, c.EpsNoise)
		}
		if math.Abs((1+math.Exp(0.7))*c.DeltaFail-c.DeltaFailCharge) > 1e-20 {
			t.Errorf("fail charge %v for P = %v", c.DeltaFailCharge, c.DeltaFail)
		}
		// Tail: P(chi_k > Tail) <= DeltaObjective, by simulation for the
		// bound's slack direction (a too-small Tail would show up here).
		r := rand.New(rand.NewPCG(3, uint64(k)))
		over := 0
		const trials = 200000
		for range trials {
			var s float64
			for range c.SubspaceDim {
				g := r.NormFloat64()
				s += g * g
			}
			if math.Sqrt(s) > c.Tail {
				over++
			}
		}
		if over > 5 {
			t.Errorf("K = %d: %d of %d chi draws above the tail point %v (delta %v)", k, over, trials, c.Tail, c.DeltaObjective)
		}
	}
}

// TestGradientAndHessian checks the objective's gradient and Hessian against
// finite differences, for logistic and softmax with a noise term.
func TestGradientAndHessian(t *testing.T) {
	for _, k := range []int{1, 3} {
		loss := losses.Loss(losses.Logistic{})
		if k > 1 {
			loss = losses.Softmax{}
		}
		X, y := rows(40, 4, k, 7)
		p := k * 4
		b := make([]float64, p)
		w := make([]float64, p)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range b {
			b[i], w[i] = r.NormFloat64(), r.NormFloat64()
		}
		o := newObjective(t, X, y, loss, k, 0.3, b)
		g := make([]float64, p)
		o.FuncGrad(g, w)
		H := hessian(o, w)
		h := 1e-6
		for i := range p {
			wp, wm := append([]float64(nil), w...), append([]float64(nil), w...)
			wp[i] += h
			wm[i] -= h
			fd := (o.Func(wp) - o.Func(wm)) / (2 * h)
			if math.Abs(fd-g[i]) > 1e-6 {
				t.Errorf("K = %d: gradient %d = %v, finite difference %v", k, i, g[i], fd)
			}
			gp, gm := make([]float64, p), make([]float64, p)
			o.FuncGrad(gp, wp)
			o.FuncGrad(gm, wm)
			for j := range p {
				if fd := (gp[j] - gm[j]) / (2 * h); math.Abs(fd-H.At(i, j)) > 1e-6 {
					t.Errorf("K = %d: Hessian (%d, %d) = %v, finite difference %v", k, i, j, H.At(i, j), fd)
				}
			}
		}
	}
}

// inverseNoise returns b(w; S) = -(sum_i grad l_i(w) + n lambda w), the
// noise for which w minimizes F on S.
func inverseNoise(t testing.TB, X *mat.Dense, y []float64, loss losses.Loss, k int, lambda float64, w []float64) []float64 {
	o := newObjective(t, X, y, loss, k, lambda, nil)
	g := make([]float64, len(w))
	o.FuncGrad(g, w)
	floats.Scale(-float64(o.Rows()), g)
	return g
}

// logDetJacobian returns log det of the Hessian of n F at w on S.
func logDetJacobian(t testing.TB, X *mat.Dense, y []float64, loss losses.Loss, k int, lambda float64, w []float64) float64 {
	o := newObjective(t, X, y, loss, k, lambda, nil)
	H := hessian(o, w)
	var chol mat.Cholesky
	if !chol.Factorize(H) {
		panic("not positive definite")
	}
	return chol.LogDet() + float64(len(w))*math.Log(float64(o.Rows()))
}

// TestChangeOfVariables checks, for a fixed noise b, the structure the proof
// uses: the minimizer w* of F on S maps back to b (the inverse map), and at
// the same w* the neighbour S' (one row replaced adversarially) gives a noise
// within 2L of b and a Jacobian determinant within the factor
// exp(EpsJacobian). It also checks that the Jacobian bound is nearly
// attained by the adversarial row (the rank-one term of a row with l” at
// its maximum, orthogonal to the other rows), so a bound half as large
// would fail: the test can fail.
func TestChangeOfVariables(t *testing.T) {
	for _, k := range []int{1, 3} {
		loss := losses.Loss(losses.Logistic{})
		if k > 1 {
			loss = losses.Softmax{}
		}
		n, d := 60, 5
		X, y := rows(n, d, k, 11)
		// Rows live in the first d-2 coordinates and the bias; the
		// replacement is a unit row along coordinate d-2, which no other
		// row touches: the worst case for the determinant.
		for i := range n {
			X.Set(i, d-2, 0)
		}
		lambda := 0.02
		pr := problem(loss, X, k, lambda)
		c, err := Calibrate(perturb.Objective, 3, 0, pr)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]float64, k*d)
		if err := perturb.Seeded(5).AddGammaNorm(b, 2*c.L, c.EpsNoise); err != nil {
			t.Fatal(err)
		}
		o := newObjective(t, X, y, loss, k, lambda, b)
		w := make([]float64, k*d)
		st, err := o.Minimize(context.Background(), w, glm.Settings{GradTol: GradTol, Fallback: c.FallbackSteps, Step: c.Step})
		if err != nil || !st.Reached {
			t.Fatalf("K = %d: solver %+v, %v", k, st, err)
		}
		back := inverseNoise(t, X, y, loss, k, lambda, w)
		if dist := floats.Distance(back, b, 2); dist > 1e-6*(1+floats.Norm(b, 2)) {
			t.Errorf("K = %d: the inverse map gives b within %v", k, dist)
		}
		// Adversarial replacement of row 0: a unit row along the unused
		// coordinate, label chosen so its margin is 0 at w (l'' maximal).
		X2 := mat.DenseCopyOf(X)
		y2 := append([]float64(nil), y...)
		row := make([]float64, d)
		row[d-2] = 1
		X2.SetRow(0, row)
		y2[0] = y[0]
		b2 := inverseNoise(t, X2, y2, loss, k, lambda, w)
		if dist := floats.Distance(b, b2, 2); dist > 2*c.L*(1+1e-12) {
			t.Errorf("K = %d: ||b(w;S) - b(w;S')|| = %v > 2L = %v", k, dist, 2*c.L)
		}
		ratio := logDetJacobian(t, X2, y2, loss, k, lambda, w) - logDetJacobian(t, X, y, loss, k, lambda, w)
		if math.Abs(ratio) > c.EpsJacobian*(1+1e-9) {
			t.Errorf("K = %d: log det ratio %v above the bound %v", k, ratio, c.EpsJacobian)
		}
		if ratio < c.EpsJacobian/2 {
			t.Errorf("K = %d: log det ratio %v: the adversarial row does not approach the bound %v (the test would not catch a bound half as large)", k, ratio, c.EpsJacobian)
		}
	}
}

// TestReleaseNoiseLaw checks the norm of the pure variant's noise against
// Gamma(P, theta) (mean P theta, sd sqrt(P) theta) through the minimizer:
// with the data term removed (a null data set: every row zero), w* = -b/(n
// lambda) exactly, so ||w*|| n lambda is ||b||.
func TestReleaseNoiseLaw(t *testing.T) {
	n, d := 50, 6
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := range y {
		y[i] = 1
	}
	pr := problem(losses.Logistic{}, X, 1, 0.5)
	c, err := Calibrate(perturb.Objective, 1, 0, pr)
	if err != nil {
		t.Fatal(err)
	}
	src := perturb.Seeded(9)
	const trials = 2000
	var sum, sq float64
	for range trials {
		m, _, err := Release(context.Background(), X, y, pr, c, src)
		if err != nil {
			t.Fatal(err)
		}
		nb := floats.Norm(m.W, 2) * float64(n) * pr.Lambda
		sum += nb
		sq += nb * nb
	}
	mean := sum / trials
	want := float64(c.P) * c.Theta
	se := math.Sqrt(float64(c.P)) * c.Theta / math.Sqrt(trials)
	if math.Abs(mean-want) > 5*se {
		t.Errorf("mean ||b|| = %v, want %v +- %v (5 standard errors)", mean, want, 5*se)
	}
	// AMP: the output noise is tiny next to b_1.
	pr.Lambda = 0.5
	ca, err := Calibrate(perturb.AMP, 1, 1e-5, pr)
	if err != nil {
		t.Fatal(err)
	}
	if ca.Sigma2 > 1e-3*ca.Sigma1/(float64(n)*pr.Lambda) {
		t.Errorf("sigma_2 = %v is not negligible against sigma_1/(n lambda) = %v", ca.Sigma2, ca.Sigma1/(float64(n)*pr.Lambda))
	}
}

func TestRowsChecked(t *testing.T) {
	X, y := rows(10, 3, 1, 1)
	X.Set(0, 0, 2)
	pr := problem(losses.Logistic{}, X, 1, 1)
	c, err := Calibrate(perturb.Objective, 1, 0, pr)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Release(context.Background(), X, y, pr, c, perturb.Seeded(1)); !errors.Is(err, ErrCondition) || !strings.Contains(err.Error(), "kappa") {
		t.Errorf("a row above kappa: %v", err)
	}
}

// TestRaiseToFloor checks the extra-ridge step: a lambda below the floor is
// raised to it with the ridge Delta = floor - lambda, the raised problem
// calibrates with the Jacobian part at exactly half of the objective
// part's eps, a lambda just below the floor is still refused by
// Calibrate, and a lambda above it is left alone. At the floor, an
// adversarial neighbour (the construction of TestChangeOfVariables) gives
// a log-determinant ratio within EpsJacobian and above half of it, so a
// floor that let the Jacobian part exceed eps/2 by a factor of two would
// fail.
func TestRaiseToFloor(t *testing.T) {
	n, d := 60, 5
	X, y := rows(n, d, 1, 11)
	for i := range n {
		X.Set(i, d-2, 0)
	}
	for _, m := range []dp.Mechanism{perturb.Objective, perturb.AMP} {
		eps, delta := 3.0, 0.0
		if m == perturb.AMP {
			delta = 1e-5
		}
		pr := problem(losses.Logistic{}, X, 1, 1e-6)
		floor, err := LambdaFloor(m, eps, delta, pr)
		if err != nil {
			t.Fatal(err)
		}
		raised, extra, err := RaiseToFloor(m, eps, delta, pr)
		if err != nil {
			t.Fatal(err)
		}
		if raised.Lambda != floor || math.Abs(extra-(floor-1e-6)) > 1e-15 {
			t.Fatalf("%s: raised to %v with Delta %v, want the floor %v and Delta %v", m, raised.Lambda, extra, floor, floor-1e-6)
		}
		c, err := Calibrate(m, eps, delta, raised)
		if err != nil {
			t.Fatalf("%s: the raised problem does not calibrate: %v", m, err)
		}
		if math.Abs(c.EpsJacobian-c.EpsObjective/2) > 1e-12 || math.Abs(c.EpsNoise-c.EpsObjective/2) > 1e-12 {
			t.Errorf("%s at the floor: eps_J = %v, eps_noise = %v, want both %v", m, c.EpsJacobian, c.EpsNoise, c.EpsObjective/2)
		}
		below := raised
		below.Lambda = floor * (1 - 1e-9)
		if _, err := Calibrate(m, eps, delta, below); !errors.Is(err, ErrCondition) || !strings.Contains(err.Error(), "floor") {
			t.Errorf("%s: lambda just below the floor: %v, want a refusal naming the floor", m, err)
		}
		above := pr
		above.Lambda = 2 * floor
		if got, extra, err := RaiseToFloor(m, eps, delta, above); err != nil || got != above || extra != 0 {
			t.Errorf("%s: lambda above the floor changed to %v (Delta %v, %v)", m, got.Lambda, extra, err)
		}

		// Adversarial neighbour at the floor: row 0 replaced by a unit row
		// along the unused coordinate, at a w where its margin is 0.
		w := make([]float64, d)
		w[0] = 0.5
		X2 := mat.DenseCopyOf(X)
		row := make([]float64, d)
		row[d-2] = 1
		X2.SetRow(0, row)
		ratio := logDetJacobian(t, X2, y, losses.Logistic{}, 1, floor, w) - logDetJacobian(t, X, y, losses.Logistic{}, 1, floor, w)
		if ratio > c.EpsJacobian*(1+1e-9) {
			t.Errorf("%s: log det ratio %v above eps_J = %v at the floor", m, ratio, c.EpsJacobian)
		}
		if ratio < c.EpsJacobian/2 {
			t.Errorf("%s: log det ratio %v far below eps_J = %v: the test would not catch a floor half as large", m, ratio, c.EpsJacobian)
		}
	}
}

// TestMinimizeExact checks the noise-free solve against Minimize above the
// floor and that it needs no floor.
func TestMinimizeExact(t *testing.T) {
	X, y := rows(200, 4, 1, 3)
	X.Scale(0.999, X) // norms of exactly 1 may round above it
	pr := problem(losses.Logistic{}, X, 1, 0.05)
	c, err := Calibrate(perturb.Objective, 1, 0, pr)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := Minimize(context.Background(), X, y, pr, c)
	if err != nil {
		t.Fatal(err)
	}
	got, st, err := MinimizeExact(context.Background(), X, y, pr)
	if err != nil || !st.Reached || floats.Distance(got, want, 2) > 1e-9 {
		t.Errorf("MinimizeExact %v (%+v, %v), Minimize %v", got, st, err, want)
	}
	pr.Lambda = 1e-7 // far below every floor
	if _, st, err := MinimizeExact(context.Background(), X, y, pr); err != nil || st.GradNorm > 1e-6 {
		t.Errorf("lambda 1e-7: %+v, %v", st, err)
	}
	pr.Lambda = 0
	if _, _, err := MinimizeExact(context.Background(), X, y, pr); !errors.Is(err, ErrCondition) {
		t.Errorf("lambda 0: %v, want ErrCondition", err)
	}
}

// TestCheckRowsFirstFailure puts one bad row (above kappa, a NaN, an
// infinity, a bad label, a norm whose square overflows) at every position
// of 11 rows (the four-row path and the tail) and requires the error to
// name that row and its fault; with two bad rows, the first is named.
func TestCheckRowsFirstFailure(t *testing.T) {
	faults := []struct {
		name, want string
		set        func(X *mat.Dense, y []float64, i int)
	}{
		{"above kappa", "above kappa", func(X *mat.Dense, _ []float64, i int) { X.Set(i, 1, 2) }},
		{"NaN", "not finite", func(X *mat.Dense, _ []float64, i int) { X.Set(i, 2, math.NaN()) }},
		{"Inf", "not finite", func(X *mat.Dense, _ []float64, i int) { X.Set(i, 0, math.Inf(-1)) }},
		{"label", "label", func(_ *mat.Dense, y []float64, i int) { y[i] = 0 }},
		{"square overflows", "above kappa", func(X *mat.Dense, _ []float64, i int) { X.Set(i, 0, 1e200) }},
	}
	for _, f := range faults {
		for i := range 11 {
			X, y := rows(11, 3, 1, 1)
			pr := problem(losses.Logistic{}, X, 1, 1)
			if err := CheckRows(X, y, pr); err != nil {
				t.Fatalf("clean rows: %v", err)
			}
			f.set(X, y, i)
			if i+3 < 11 { // a second fault later must not be the one named
				faults[0].set(X, y, i+3)
			}
			err := CheckRows(X, y, pr)
			if !errors.Is(err, ErrCondition) || !strings.Contains(err.Error(), fmt.Sprintf("row %d ", i)) && !strings.Contains(err.Error(), fmt.Sprintf("row %d:", i)) || !strings.Contains(err.Error(), f.want) {
				t.Errorf("%s at row %d: %v", f.name, i, err)
			}
		}
	}
}

// TestCheckRowsExtremeKappa checks rows against a kappa whose square
// overflows or underflows float64: an infinity is not finite, a row above
// kappa is refused, a row below it is accepted (the rows are compared as
// x/kappa with the unit ball).
func TestCheckRowsExtremeKappa(t *testing.T) {
	for _, tc := range []struct {
		kappa, v float64
		want     string // "" accepted
	}{
		{1e155, math.Inf(1), "not finite"},
		{1e155, 1e200, "above kappa"},
		{1e155, 0.5e155, ""},
		{1e-170, 2e-170, "above kappa"},
		{1e-170, 0.5e-170, ""},
		{1e-170, math.NaN(), "not finite"},
	} {
		for _, n := range []int{4, 5} { // the four-row path and the tail
			X := mat.NewDense(n, 2, nil)
			y := make([]float64, n)
			for i := range y {
				y[i] = 1
			}
			X.Set(n-1, 0, tc.v)
			pr := Problem{Loss: losses.Logistic{}, N: n, D: 2, K: 1, Kappa: tc.kappa, Lambda: 1}
			err := CheckRows(X, y, pr)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("kappa %g, value %g, n = %d: %v, want %q", tc.kappa, tc.v, n, err, tc.want)
			}
		}
	}
}

// TestReleaseRefusesOtherCalibration checks that Release refuses a
// calibration made for another problem: another kappa (whose L the noise
// scale follows), another loss, another eps.
func TestReleaseRefusesOtherCalibration(t *testing.T) {
	X, y := rows(20, 3, 1, 2)
	X.Scale(0.999, X)
	pr := problem(losses.Logistic{}, X, 1, 1)
	cal, err := Calibrate(perturb.Objective, 1, 0, pr)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Release(context.Background(), X, y, pr, cal, perturb.Seeded(1)); err != nil {
		t.Fatalf("its own calibration: %v", err)
	}
	big := pr
	big.Kappa = 1e6
	if _, _, err := Release(context.Background(), X, y, big, cal, perturb.Seeded(1)); !errors.Is(err, ErrCondition) {
		t.Errorf("a calibration for kappa = 1 used at kappa = 1e6: %v", err)
	}
	other := cal
	other.Theta /= 2 // half the noise
	if _, _, err := Release(context.Background(), X, y, pr, other, perturb.Seeded(1)); !errors.Is(err, ErrCondition) {
		t.Errorf("a calibration with another noise scale: %v", err)
	}
}

// renamed is the logistic loss under another name: the conditions are read
// from its constants, not its name or type.
type renamed struct{ losses.Logistic }

func (renamed) Name() string { return "my-logistic" }

// notC2 is the logistic loss with constants that do not say C2.
type notC2 struct{ losses.Logistic }

func (l notC2) Constants(d losses.Domain) (losses.Constants, error) {
	c, err := l.Logistic.Constants(d)
	c.C2 = false
	return c, err
}

// TestConditionsFromConstants checks that CheckLoss and the calibration
// read the loss's constants: a renamed logistic loss is accepted with the
// logistic calibration, the same loss without C2 is refused, and softmax's
// Jacobian part uses its Hessian's rank K - 1 and RankSz = 1/K.
func TestConditionsFromConstants(t *testing.T) {
	pr := Problem{Loss: losses.Logistic{}, N: 1000, D: 5, K: 1, Kappa: 1, Lambda: 0.1}
	want, err := Calibrate(perturb.Objective, 1, 0, pr)
	if err != nil {
		t.Fatal(err)
	}
	pr.Loss = renamed{}
	if got, err := Calibrate(perturb.Objective, 1, 0, pr); err != nil || got != want {
		t.Errorf("renamed logistic: %+v, %v; want %+v", got, err, want)
	}
	if err := CheckLoss(notC2{}); !errors.Is(err, ErrCondition) || !strings.Contains(err.Error(), "smoothness") {
		t.Errorf("a loss that is not C2: %v, want a smoothness ErrCondition", err)
	}
	for _, k := range []int{2, 3, 7} {
		c, err := Calibrate(perturb.Objective, 1, 0, Problem{Loss: losses.Softmax{}, N: 1000, D: 5, K: k, Kappa: 1, Lambda: 0.1})
		if err != nil || c.Rank != k-1 || c.Curv != 1/float64(k) {
			t.Errorf("softmax K = %d: rank %d, curvature %v, %v; want %d, %v", k, c.Rank, c.Curv, err, k-1, 1/float64(k))
		}
	}
	if _, err := Calibrate(perturb.Objective, 1, 0, Problem{Loss: losses.Softmax{}, N: 1000, D: 5, K: 1, Kappa: 1, Lambda: 0.1}); !errors.Is(err, ErrCondition) {
		t.Errorf("softmax with K = 1: %v, want ErrCondition", err)
	}
}
