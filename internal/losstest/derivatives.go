package losstest

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/stabpriv/stabpriv/internal/check"
)

// The checks of the derivatives: the gradient and the Hessian against
// finite differences, and the constants L_z and S_z against them.

func checkGrad(c Case, k int, pts []point) []error {
	l := c.Loss
	var errs []error
	g := make([]float64, k)
	checked := 0
	for _, p := range pts {
		z := append([]float64(nil), p.z...)
		if v := l.Grad(g, z, p.y); v != l.Value(z, p.y) {
			errs = append(errs, fmt.Errorf("grad: Grad returns %v, Value %v at z = %v, y = %v", v, l.Value(z, p.y), z, p.y))
		}
		for j := range z {
			h := step(z[j])
			if kink(l, z, p.y, j, h) {
				continue
			}
			checked++
			zj := z[j]
			z[j] = zj + h
			vp := l.Value(z, p.y)
			z[j] = zj - h
			vm := l.Value(z, p.y)
			z[j] = zj
			if fd := (vp - vm) / (2 * h); !near(g[j], fd, 1e-6) {
				errs = append(errs, fmt.Errorf("grad: dl/dz_%d = %v, finite difference %v at z = %v, y = %v", j, g[j], fd, z, p.y))
			}
		}
	}
	if checked < len(pts)/2 {
		errs = append(errs, fmt.Errorf("grad: only %d coordinates away from kinks, of %d points", checked, len(pts)))
	}
	return errs
}

func checkHess(c Case, k int, pts []point) []error {
	l := c.Loss
	var errs []error
	hs := make([]float64, k*k)
	gp, gm := make([]float64, k), make([]float64, k)
	for _, p := range pts {
		z := append([]float64(nil), p.z...)
		l.Hess(hs, z, p.y)
		for i := 0; i < k; i++ {
			for j := 0; j < i; j++ {
				if !near(hs[i*k+j], hs[j*k+i], 1e-12) {
					errs = append(errs, fmt.Errorf("hess: H[%d,%d] = %v, H[%d,%d] = %v at z = %v: not symmetric", i, j, hs[i*k+j], j, i, hs[j*k+i], z))
				}
			}
		}
		for j := range z {
			h := step(z[j])
			if kink(l, z, p.y, j, h) {
				continue
			}
			zj := z[j]
			z[j] = zj + h
			l.Grad(gp, z, p.y)
			z[j] = zj - h
			l.Grad(gm, z, p.y)
			z[j] = zj
			for i := 0; i < k; i++ {
				if fd := (gp[i] - gm[i]) / (2 * h); !near(hs[i*k+j], fd, 1e-6) {
					errs = append(errs, fmt.Errorf("hess: H[%d,%d] = %v, finite difference %v at z = %v, y = %v", i, j, hs[i*k+j], fd, z, p.y))
				}
			}
		}
	}
	return errs
}

// directions returns unit vectors of length k: the axes, the normalized
// differences of two axes and 8 seeded random directions.
func directions(k int) [][]float64 {
	var vs [][]float64
	for i := 0; i < k; i++ {
		v := make([]float64, k)
		v[i] = 1
		vs = append(vs, v)
		for j := 0; j < i; j++ {
			v := make([]float64, k)
			v[i], v[j] = math.Sqrt2/2, -math.Sqrt2/2
			vs = append(vs, v)
		}
	}
	r := rand.New(rand.NewPCG(7, uint64(k)))
	for n := 0; n < 8 && k > 1; n++ {
		v := make([]float64, k)
		var s float64
		for i := range v {
			v[i] = r.NormFloat64()
			s += v[i] * v[i]
		}
		for i := range v {
			v[i] /= math.Sqrt(s)
		}
		vs = append(vs, v)
	}
	return vs
}

func checkConstants(c Case, k int, pts []point) []error {
	l := c.Loss
	cons, err := l.Constants(c.Domain)
	if err != nil {
		return []error{fmt.Errorf("constants: Constants(%+v): %w", c.Domain, err)}
	}
	if !check.NonNegative(cons.Lz) || !check.NonNegative(cons.Sz) {
		return []error{fmt.Errorf("constants: L_z = %v, S_z = %v, want finite >= 0", cons.Lz, cons.Sz)}
	}
	rank, rankSz := cons.Rank, cons.RankSz
	if rank == 0 {
		rank = k
	}
	if rankSz == 0 {
		rankSz = cons.Sz
	}
	if rank < 0 || rank > k || !check.NonNegative(rankSz) || rankSz > cons.Sz {
		return []error{fmt.Errorf("constants: Rank = %d, RankSz = %v, want 0 <= Rank <= K = %d and 0 <= RankSz <= S_z = %v", cons.Rank, cons.RankSz, k, cons.Sz)}
	}
	const tol = 1e-12
	var errs []error
	g, hs := make([]float64, k), make([]float64, k*k)
	dirs := directions(k)
	for _, p := range pts {
		l.Grad(g, p.z, p.y)
		var s float64
		for _, v := range g {
			s += v * v
		}
		if n := math.Sqrt(s); n > cons.Lz*(1+tol) {
			errs = append(errs, fmt.Errorf("constants: |dl/dz| = %v > L_z = %v at z = %v, y = %v", n, cons.Lz, p.z, p.y))
		}
		l.Hess(hs, p.z, p.y)
		for _, v := range dirs {
			var q float64
			for i := 0; i < k; i++ {
				for j := 0; j < k; j++ {
					q += v[i] * hs[i*k+j] * v[j]
				}
			}
			if math.Abs(q) > cons.Sz*(1+tol)+tol {
				errs = append(errs, fmt.Errorf("constants: curvature %v, |curvature| > S_z = %v at z = %v, y = %v", q, cons.Sz, p.z, p.y))
			}
			if cons.Convex && q < -tol*(1+cons.Sz) {
				errs = append(errs, fmt.Errorf("constants: curvature %v < 0 for a convex loss at z = %v, y = %v", q, p.z, p.y))
			}
		}
		if rank == k && rankSz == cons.Sz {
			continue // nothing beyond S_z, which the directions checked
		}
		nonzero, sum := 0, 0.0
		for _, v := range jacobiEigen(k, hs) {
			if math.Abs(v) > tol*(1+cons.Sz) {
				nonzero++
			}
			sum += v
		}
		if nonzero > rank {
			errs = append(errs, fmt.Errorf("constants: %d nonzero Hessian eigenvalues > Rank = %d at z = %v, y = %v", nonzero, rank, p.z, p.y))
		}
		if sum > float64(rank)*rankSz*(1+tol)+tol {
			errs = append(errs, fmt.Errorf("constants: Hessian eigenvalues sum to %v > Rank*RankSz = %v at z = %v, y = %v", sum, float64(rank)*rankSz, p.z, p.y))
		}
	}
	return errs
}

// jacobiEigen returns the eigenvalues of the symmetric k x k matrix h
// (row-major) by cyclic Jacobi rotations, to about 1e-15 of its largest
// entry: a few sweeps for the small matrices of a margin Hessian, and no
// scaling of tiny entries (where LAPACK's eigensolver may fail).
func jacobiEigen(k int, h []float64) []float64 {
	a := append([]float64(nil), h...)
	for sweep := 0; sweep < 50; sweep++ {
		var off, top float64
		for i := range k {
			for j := range k {
				if i != j {
					off += a[i*k+j] * a[i*k+j]
				}
				top = math.Max(top, math.Abs(a[i*k+j]))
			}
		}
		if off <= 1e-30*top*top {
			break
		}
		for p := 0; p < k; p++ {
			for q := p + 1; q < k; q++ {
				apq := a[p*k+q]
				if apq == 0 {
					continue
				}
				// the rotation that zeroes (p, q) (Golub & Van Loan, 8.5.2)
				theta := (a[q*k+q] - a[p*k+p]) / (2 * apq)
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				sn := t * c
				for r := range k {
					arp, arq := a[r*k+p], a[r*k+q]
					a[r*k+p], a[r*k+q] = c*arp-sn*arq, sn*arp+c*arq
				}
				for r := range k {
					apr, aqr := a[p*k+r], a[q*k+r]
					a[p*k+r], a[q*k+r] = c*apr-sn*aqr, sn*apr+c*aqr
				}
			}
		}
	}
	vals := make([]float64, k)
	for i := range vals {
		vals[i] = a[i*k+i]
	}
	return vals
}
