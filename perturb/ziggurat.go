package perturb

import (
	"math"
	"math/bits"
)

// The seeded source's bulk Gaussian sampler (FillNormal), for DP-SGD: the
// ziggurat method of Marsaglia & Tsang (2000, "The ziggurat method for
// generating random variables", J. Stat. Softw. 5(8)) with 256 layers, one
// 64-bit word of a PCG generator a draw in about 98.5% of the draws (FillNormal
// costs about 0.6 of NormFloat64 per draw: TestFillNormalLaw and
// TestZigguratTail check the law).
//
// The layers. Let f(x) = exp(-x^2/2) on [0, inf), r = zigR and v = zigV:
// x_255 = r, x_{i-1} = f^-1(v/x_i + f(x_i)) for i = 255, ..., 2, and x_0 =
// 0 at the top (f(x_0) = 1). Layer i >= 1 is the rectangle [0, x_i] x [f(x_i),
// f(x_{i-1})] (area v), layer 0 the base [0, r] x [0, f(r)] with the tail
// beyond r (area v too: v = r f(r) + int_r^inf f). A word picks the layer
// i from its low 8 bits (uniform: equal areas) and a signed 54-bit integer
// j from its top 54 bits, disjoint from them; x = j x_i 2^-53 (for the
// base, x = j (v/f(r)) 2^-53: the base's rectangle, of width r, and past r
// the tail's share of its area), uniform on the layer's width with a
// random sign. The rectangle part under the next layer, |x| <
// x_{i-1} (r for layer 0), lies under f and is accepted at once (|j| <
// zigK[i]); otherwise layer 0 draws the tail beyond r by Marsaglia's
// method (x = -log(U1)/r, accepted when -2 log(U2) > x^2) and a layer
// i >= 1 accepts x when a uniform height in [f(x_i), f(x_{i-1})] lies
// below f(x) (the wedge), or draws afresh. The accepted x has the density
// proportional to f(|x|): the standard normal law, up to the rounding of
// float64 arithmetic in the tables and the wedge test (a seeded draw is not
// for release, and perturb's secure source draws exactly: see exactgauss).
const (
	zigR = 3.6541528853610088
	zigV = 0.00492867323399
)

// The ziggurat's layers: zigW[i] = x_i 2^-53 (v/f(r) 2^-53 for the base),
// zigK[i] the acceptance bound of |j|, floor(2^53 x_{i-1}/x_i) (2^53 r
// f(r)/v for the base), zigF[i] = f(x_i).
var zigW, zigF [256]float64
var zigK [256]uint64

func init() {
	const m = 1 << 53
	fr := math.Exp(-0.5 * zigR * zigR)
	q := zigV / fr
	zigK[0] = uint64(zigR / q * m)
	zigW[0] = q / m
	zigF[0] = 1
	zigW[255] = zigR / m
	zigF[255] = fr
	x := zigR
	for i := 254; i >= 1; i-- {
		next := math.Sqrt(-2 * math.Log(zigV/x+math.Exp(-0.5*x*x)))
		zigK[i+1] = uint64(next / x * m)
		x = next
		zigF[i] = math.Exp(-0.5 * x * x)
		zigW[i] = x / m
	}
	zigK[1] = 0
}

// zigFill sets every z[i] to a standard normal draw by the ziggurat from
// the words of g.
func zigFill(g *pcg, z []float64) {
	hi, lo := g.hi, g.lo // the state in registers through the loop
	for k := range z {
		st := pcg{hi, lo}
		u := st.Uint64()
		hi, lo = st.hi, st.lo
		i := u & 0xff
		j := int64(u) >> 10 // the top 54 bits, signed
		a := j
		if a < 0 {
			a = -a
		}
		if uint64(a) < zigK[i] {
			z[k] = float64(j) * zigW[i]
			continue
		}
		g.hi, g.lo = hi, lo
		z[k] = zigSlow(g, i, j)
		hi, lo = g.hi, g.lo
	}
	g.hi, g.lo = hi, lo
}

// pcg is math/rand/v2's PCG generator (a 128-bit LCG with the DXSM
// output), the stream of rand.NewPCG(hi, lo) (TestPCGMatchesRand), in a
// form whose state zigFill keeps in registers.
type pcg struct{ hi, lo uint64 }

// Uint64 returns the next word, as rand.PCG's Uint64 does.
func (p *pcg) Uint64() uint64 {
	const (
		mulHi    = 2549297995355413924
		mulLo    = 4865540595714422341
		incHi    = 6364136223846793005
		incLo    = 1442695040888963407
		cheapMul = 0xda942042e4dd58b5
	)
	hi, lo := bits.Mul64(p.lo, mulLo)
	hi += p.hi*mulLo + p.lo*mulHi
	lo, c := bits.Add64(lo, incLo, 0)
	hi, _ = bits.Add64(hi, incHi, c)
	p.lo, p.hi = lo, hi
	hi ^= hi >> 32
	hi *= cheapMul
	hi ^= hi >> 48
	hi *= lo | 1
	return hi
}

// zigSlow finishes a draw whose first word (layer i, integer j) fell
// outside the rectangle parts: the tail or the wedge, then fresh words.
func zigSlow(g *pcg, i uint64, j int64) float64 {
	for {
		x := float64(j) * zigW[i]
		if i == 0 {
			// The tail beyond r, by Marsaglia's method.
			for {
				t := -math.Log(openUnit(g.Uint64())) / zigR
				y := -math.Log(openUnit(g.Uint64()))
				if y+y >= t*t {
					if j < 0 {
						return -zigR - t
					}
					return zigR + t
				}
			}
		}
		// The wedge of layer i; the product is rounded before its sum (the
		// explicit conversion: no fused multiply-add under GOAMD64=v3 or
		// on arm64), so the draws are the same on every build.
		if zigF[i]+float64(openUnit(g.Uint64())*(zigF[i-1]-zigF[i])) < math.Exp(-0.5*x*x) {
			return x
		}
		u := g.Uint64()
		i, j = u&0xff, int64(u)>>10
		a := j
		if a < 0 {
			a = -a
		}
		if uint64(a) < zigK[i] {
			return float64(j) * zigW[i]
		}
	}
}

// openUnit maps a uniform word to a uniform float64 in (0, 1): (the top 53
// bits + 1/2) 2^-53.
func openUnit(u uint64) float64 {
	return (float64(u>>11) + 0.5) * 0x1p-53
}
