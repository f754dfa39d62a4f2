package losses

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSoftmaxFiniteDifference checks the gradient against central
// differences of Value and the Hessian against central differences of
// Grad, at random margins for K in {2, 3, 6}, and that the Hessian is
// symmetric with rows summing to 0 (softmax is invariant to z + c 1).
func TestSoftmaxFiniteDifference(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 0x5f))
	var l Softmax
	for _, k := range []int{2, 3, 6} {
		g, gp, gm := make([]float64, k), make([]float64, k), make([]float64, k)
		hess := make([]float64, k*k)
		for trial := 0; trial < 300; trial++ {
			scale := []float64{1e-2, 1, 5, 30}[r.IntN(4)]
			z := make([]float64, k)
			for j := range z {
				z[j] = scale * r.NormFloat64()
			}
			y := float64(r.IntN(k))
			v := l.Grad(g, z, y)
			if v != l.Value(z, y) {
				t.Fatalf("Grad returns %v, Value %v", v, l.Value(z, y))
			}
			l.Hess(hess, z, y)
			for j := 0; j < k; j++ {
				h := 1e-5 * (1 + math.Abs(z[j]))
				zj := z[j]
				z[j] = zj + h
				vp := l.Grad(gp, z, y)
				z[j] = zj - h
				vm := l.Grad(gm, z, y)
				z[j] = zj
				if fd := (vp - vm) / (2 * h); !near(g[j], fd, 1e-6) {
					t.Errorf("K=%d z=%v y=%v: dl/dz_%d = %v, finite difference %v", k, z, y, j, g[j], fd)
				}
				var rowSum float64
				for i := 0; i < k; i++ {
					fd := (gp[i] - gm[i]) / (2 * h)
					if !near(hess[i*k+j], fd, 1e-6) {
						t.Errorf("K=%d z=%v: H[%d,%d] = %v, finite difference %v", k, z, i, j, hess[i*k+j], fd)
					}
					if hess[i*k+j] != hess[j*k+i] {
						t.Errorf("K=%d: Hessian not symmetric at (%d, %d)", k, i, j)
					}
					rowSum += hess[j*k+i]
				}
				if math.Abs(rowSum) > 1e-15 {
					t.Errorf("K=%d: Hessian row %d sums to %v", k, j, rowSum)
				}
			}
		}
	}
}

// TestSoftmaxStable checks values at margins that overflow a naive
// exp: the loss is finite and matches the closed form.
func TestSoftmaxStable(t *testing.T) {
	var l Softmax
	cases := []struct {
		z    []float64
		y    float64
		want float64
	}{
		{[]float64{1000, 0}, 0, math.Log1p(math.Exp(-1000))},
		{[]float64{1000, 0}, 1, 1000},
		{[]float64{-1000, -1000, -1000}, 2, math.Log(3)},
		{[]float64{0, 0}, 1, math.Ln2},
		{[]float64{800, 800}, 0, math.Ln2},
	}
	g := make([]float64, 3)
	for _, c := range cases {
		got := l.Grad(g[:len(c.z)], c.z, c.y)
		if !near(got, c.want, 1e-14) || !near(l.Value(c.z, c.y), c.want, 1e-14) {
			t.Errorf("l(%v, %v) = %v, want %v", c.z, c.y, got, c.want)
		}
		for _, v := range g[:len(c.z)] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("gradient at %v not finite: %v", c.z, g)
			}
		}
	}
}

func TestSoftmaxOutputs(t *testing.T) {
	for _, k := range []int{2, 3, 10} {
		if got := (Softmax{}).Outputs(k); got != k {
			t.Errorf("Outputs(%d) = %d", k, got)
		}
	}
	for _, l := range All() {
		if l.Task() == Multiclass {
			continue
		}
		if got := l.Outputs(5); got != 1 {
			t.Errorf("%s: Outputs(5) = %d, want 1", l.Name(), got)
		}
	}
}
