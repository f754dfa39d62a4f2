package regularizers

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// The randomized tests below use fixed seeds and check inequalities that
// hold for every input, so their false-rejection probability is 0.

func TestValidate(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		r  ElasticNet
		ok bool
	}{
		{ElasticNet{}, true},
		{ElasticNet{Lambda: 1}, true},
		{ElasticNet{Lambda: 1, L1Ratio: 1}, true},
		{ElasticNet{Lambda: 0.3, L1Ratio: 0.5}, true},
		{ElasticNet{Lambda: -1}, false},
		{ElasticNet{Lambda: nan}, false},
		{ElasticNet{Lambda: inf}, false},
		{ElasticNet{Lambda: -inf}, false},
		{ElasticNet{Lambda: 1, L1Ratio: -0.1}, false},
		{ElasticNet{Lambda: 1, L1Ratio: 1.1}, false},
		{ElasticNet{Lambda: 1, L1Ratio: nan}, false},
		{ElasticNet{Lambda: 1, L1Ratio: inf}, false},
		{ElasticNet{Lambda: 1, L1Ratio: -inf}, false},
	}
	for _, c := range cases {
		err := c.r.Validate()
		if c.ok && err != nil {
			t.Errorf("%+v: Validate = %v, want nil", c.r, err)
		}
		if !c.ok && !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: Validate = %v, want an error wrapping ErrInvalid", c.r, err)
		}
	}
}

func TestWeightsAndStrongConvexity(t *testing.T) {
	cases := []struct {
		r          ElasticNet
		l2, l1, mu float64
	}{
		{ElasticNet{}, 0, 0, 0},
		{L2(0.5), 0.5, 0, 0.5},
		{L1(0.5), 0, 0.5, 0},
		{ElasticNet{Lambda: 2, L1Ratio: 0.25}, 1.5, 0.5, 1.5},
	}
	for _, c := range cases {
		if c.r.L2Weight() != c.l2 || c.r.L1Weight() != c.l1 || c.r.StrongConvexity() != c.mu {
			t.Errorf("%+v: weights (%v, %v), mu %v; want (%v, %v), %v", c.r, c.r.L2Weight(), c.r.L1Weight(), c.r.StrongConvexity(), c.l2, c.l1, c.mu)
		}
	}
}

// TestPaperMapping checks the map of the type doc from the paper's
// lambda*(gamma||w||^2 + eta||w||_1) to (Lambda, L1Ratio).
func TestPaperMapping(t *testing.T) {
	lambda, gamma, eta := 0.7, 0.3, 0.2
	r := ElasticNet{Lambda: lambda * (2*gamma + eta), L1Ratio: eta / (2*gamma + eta)}
	w := []float64{1.5, -2, 0, 0.25}
	var sq, abs float64
	for _, v := range w {
		sq += v * v
		abs += math.Abs(v)
	}
	if got, want := r.Value(w), lambda*(gamma*sq+eta*abs); math.Abs(got-want) > 1e-14 {
		t.Errorf("Value = %v, paper's penalty = %v", got, want)
	}
}

// TestStrongConvexity checks R(v) >= R(w) + <g, v-w> + mu/2 ||v-w||^2 for a
// subgradient g of R at w, on random pairs, and that for the pure L2
// penalty it holds with equality, so a larger mu would fail it.
func TestStrongConvexity(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, reg := range []ElasticNet{L2(0.8), {Lambda: 1.2, L1Ratio: 0.4}, L1(0.5)} {
		mu := reg.StrongConvexity()
		var maxGap float64 // largest |gap| relative to the values
		for trial := 0; trial < 1000; trial++ {
			d := 1 + r.IntN(6)
			w, v, g := randVec(r, d, 2), randVec(r, d, 2), make([]float64, d)
			reg.AddSmoothGrad(g, w)
			var inner, dist float64
			for i := range w {
				g[i] += reg.L1Weight() * sign(w[i])
				inner += g[i] * (v[i] - w[i])
				dist += (v[i] - w[i]) * (v[i] - w[i])
			}
			gap := reg.Value(v) - reg.Value(w) - inner - mu/2*dist
			if gap < -1e-12*(1+reg.Value(v)) {
				t.Fatalf("%+v: strong convexity with mu = %v fails by %v at w = %v, v = %v", reg, mu, gap, w, v)
			}
			maxGap = math.Max(maxGap, math.Abs(gap)/(1+reg.Value(v)+reg.Value(w)))
		}
		if reg.L1Ratio == 0 && maxGap > 1e-12 {
			t.Errorf("%+v: pure L2 should be exactly mu-strongly convex, relative gap up to %v", reg, maxGap)
		}
	}
}

func TestValueAndSmoothGradFiniteDifference(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, reg := range []ElasticNet{L2(0.8), {Lambda: 1.2, L1Ratio: 0.4}, L1(0.5), {}} {
		for trial := 0; trial < 200; trial++ {
			d := 1 + r.IntN(6)
			w := randVec(r, d, 3)
			g := make([]float64, d)
			for i := range g {
				g[i] = 0.5 // AddSmoothGrad adds to dst
			}
			reg.AddSmoothGrad(g, w)
			for i := range w {
				h := 1e-6
				if math.Abs(w[i]) < 10*h {
					continue // the L1 kink at 0
				}
				wi := w[i]
				w[i] = wi + h
				vp := reg.Value(w)
				w[i] = wi - h
				vm := reg.Value(w)
				w[i] = wi
				fd := (vp - vm) / (2 * h)
				want := g[i] - 0.5 + reg.L1Weight()*sign(wi)
				if math.Abs(fd-want) > 1e-7*(1+math.Abs(want)) {
					t.Errorf("%+v: dR/dw_%d = %v (smooth grad + L1 part), finite difference %v", reg, i, want, fd)
				}
			}
		}
	}
}

func TestSoftThreshold(t *testing.T) {
	cases := []struct {
		w    []float64
		t    float64
		want []float64
	}{
		{[]float64{3, -3, 0.5, -0.5, 1, -1, 0}, 1, []float64{2, -2, 0, 0, 0, 0, 0}},
		{[]float64{3, -3}, 0, []float64{3, -3}},
		{[]float64{3, -3}, -1, []float64{3, -3}},
		{[]float64{math.Inf(1), math.Inf(-1)}, 1, []float64{math.Inf(1), math.Inf(-1)}},
	}
	for _, c := range cases {
		w := append([]float64(nil), c.w...)
		SoftThreshold(w, c.t)
		for i := range w {
			if w[i] != c.want[i] {
				t.Errorf("SoftThreshold(%v, %v) = %v, want %v", c.w, c.t, w, c.want)
				break
			}
		}
	}
	// A NaN coordinate (a diverged iterate) must stay NaN, not become 0.
	w := []float64{math.NaN(), 5}
	SoftThreshold(w, 1)
	if !math.IsNaN(w[0]) || w[1] != 4 {
		t.Errorf("SoftThreshold([NaN 5], 1) = %v, want [NaN 4]", w)
	}
}

// TestProxClosedForm compares Prox with the closed form
// sign(u) max(|u| - step*lambda*alpha, 0) and checks that it minimizes
// 1/2 ||x - u||^2 + step*lambda*alpha*||x||_1 against random perturbations.
func TestProxClosedForm(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for trial := 0; trial < 500; trial++ {
		reg := ElasticNet{Lambda: 2 * r.Float64(), L1Ratio: r.Float64()}
		step := r.Float64()
		d := 1 + r.IntN(8)
		u := randVec(r, d, 2)
		x := append([]float64(nil), u...)
		reg.Prox(x, step)
		tau := step * reg.L1Weight()
		for i := range u {
			want := math.Copysign(math.Max(math.Abs(u[i])-tau, 0), u[i])
			if math.Abs(x[i]-want) > 1e-15 {
				t.Fatalf("Prox(%v) = %v, closed form coordinate %d = %v", u, x, i, want)
			}
		}
		obj := func(v []float64) float64 {
			var s float64
			for i := range v {
				s += (v[i]-u[i])*(v[i]-u[i])/2 + tau*math.Abs(v[i])
			}
			return s
		}
		best := obj(x)
		for k := 0; k < 20; k++ {
			y := append([]float64(nil), x...)
			y[r.IntN(d)] += 0.01 * r.NormFloat64()
			if obj(y) < best-1e-15 {
				t.Fatalf("Prox(%v) = %v is not the minimizer: %v is better", u, x, y)
			}
		}
	}
}

// TestProxNonExpansive checks ||prox(u) - prox(v)|| <= ||u - v|| on random
// pairs, including pairs straddling the threshold.
func TestProxNonExpansive(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for trial := 0; trial < 5000; trial++ {
		reg := ElasticNet{Lambda: 3 * r.Float64(), L1Ratio: r.Float64()}
		step := r.Float64()
		d := 1 + r.IntN(8)
		u, v := randVec(r, d, 2), randVec(r, d, 2)
		if trial%2 == 0 {
			for i := range v { // a nearby pair
				v[i] = u[i] + 0.01*r.NormFloat64()
			}
		}
		before := dist(u, v)
		reg.Prox(u, step)
		reg.Prox(v, step)
		// Slack for rounding in the coordinates (|u_i| ~ 2) and the norms.
		if after := dist(u, v); after > before+1e-13 {
			t.Fatalf("prox expands: %v -> %v", before, after)
		}
	}
}

func TestMinNormSubgrad(t *testing.T) {
	reg := ElasticNet{Lambda: 2, L1Ratio: 0.5} // L2 weight 1, L1 weight 1
	cases := []struct {
		name    string
		g, w    []float64
		want    []float64
		wantNrm float64
	}{
		{"zero weight, |g| <= a", []float64{0.5, -1, 1}, []float64{0, 0, 0}, []float64{0, 0, 0}, 0},
		{"zero weight, g > a", []float64{3}, []float64{0}, []float64{2}, 2},
		{"zero weight, g < -a", []float64{-3}, []float64{0}, []float64{-2}, 2},
		{"positive weight", []float64{0.5}, []float64{2}, []float64{3.5}, 3.5},   // g + c w + a
		{"negative weight", []float64{0.5}, []float64{-2}, []float64{-2.5}, 2.5}, // g + c w - a
		{"optimum of 1-d lasso", []float64{-2}, []float64{1}, []float64{0}, 0},   // -2 + 1 + 1
		{"mixed", []float64{3, 0.5}, []float64{0, -1}, []float64{2, -1.5}, 2.5},
	}
	for _, c := range cases {
		dst := make([]float64, len(c.w))
		n := reg.MinNormSubgrad(dst, c.g, c.w)
		if math.Abs(n-c.wantNrm) > 1e-15 {
			t.Errorf("%s: norm %v, want %v", c.name, n, c.wantNrm)
		}
		for i := range dst {
			if math.Abs(dst[i]-c.want[i]) > 1e-15 {
				t.Errorf("%s: subgradient %v, want %v", c.name, dst, c.want)
				break
			}
		}
		// In place, as the trainer calls it (dst aliases g).
		g := append([]float64(nil), c.g...)
		if n2 := reg.MinNormSubgrad(g, g, c.w); n2 != n {
			t.Errorf("%s: in place norm %v, want %v", c.name, n2, n)
		}
	}
	// A NaN weight or gradient must not look converged.
	for _, c := range []struct{ g, w []float64 }{
		{[]float64{0.5}, []float64{math.NaN()}},
		{[]float64{math.NaN()}, []float64{0}},
	} {
		if n := reg.MinNormSubgrad(make([]float64, 1), c.g, c.w); !math.IsNaN(n) {
			t.Errorf("MinNormSubgrad(g = %v, w = %v) norm = %v, want NaN", c.g, c.w, n)
		}
	}
}

// TestMinNormSubgradIsMinimal checks on random points that the returned
// vector lies in the subdifferential and that no random element of the
// subdifferential is shorter.
func TestMinNormSubgradIsMinimal(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	reg := ElasticNet{Lambda: 1.5, L1Ratio: 0.6}
	a, c := reg.L1Weight(), reg.L2Weight()
	for trial := 0; trial < 500; trial++ {
		d := 1 + r.IntN(5)
		g, w := randVec(r, d, 2), randVec(r, d, 2)
		for i := range w {
			if r.IntN(2) == 0 {
				w[i] = 0
			}
		}
		dst := make([]float64, d)
		n := reg.MinNormSubgrad(dst, g, w)
		for k := 0; k < 20; k++ {
			var sq float64
			for i := range w {
				s := g[i] + c*w[i] + a*sign(w[i])
				if w[i] == 0 {
					s += a * (2*r.Float64() - 1)
				}
				sq += s * s
			}
			if math.Sqrt(sq) < n-1e-12 {
				t.Fatalf("subgradient of norm %v shorter than the minimum %v at w = %v, g = %v", math.Sqrt(sq), n, w, g)
			}
		}
	}
}

func TestLengthMismatchPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"AddSmoothGrad":  func() { L2(1).AddSmoothGrad(make([]float64, 2), make([]float64, 3)) },
		"MinNormSubgrad": func() { L2(1).MinNormSubgrad(make([]float64, 2), make([]float64, 3), make([]float64, 3)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic on a length mismatch", name)
				}
			}()
			f()
		}()
	}
}

func randVec(r *rand.Rand, d int, scale float64) []float64 {
	v := make([]float64, d)
	for i := range v {
		v[i] = scale * r.NormFloat64()
	}
	return v
}

func dist(u, v []float64) float64 {
	var s float64
	for i := range u {
		s += (u[i] - v[i]) * (u[i] - v[i])
	}
	return math.Sqrt(s)
}

func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
