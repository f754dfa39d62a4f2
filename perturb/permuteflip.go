package perturb

import (
	"github.com/stabpriv/stabpriv/dp"

	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
)

// PermuteAndFlipCitation is the reference for PermuteAndFlip's guarantee.
const PermuteAndFlipCitation = "McKenna & Sheldon 2020, \"Permute-and-Flip: A new mechanism for differentially private selection\", NeurIPS, Algorithm 1 and Theorem 1 (eps-DP, never worse in expected utility than the exponential mechanism of McSherry & Talwar 2007); the acceptance coins are exact Bernoulli(exp(-gamma)) draws for rational gamma (Canonne, Kamath & Steinke 2020, \"The Discrete Gaussian for Differential Privacy\", Section 5.1, Algorithm 1)"

// PermuteAndFlipName names permute-and-flip in a ledger entry of a
// private step that selects with it (the feature centres of package
// privbounds). It is not a release mechanism: ParseMechanism and Lookup
// do not accept it.
const PermuteAndFlipName = dp.PermuteAndFlip

// PermuteAndFlip returns the index of one of the candidates with integer
// utilities scores, chosen by the permute-and-flip mechanism at privacy
// parameter eps > 0 for utilities of sensitivity sens >= 1 (every score
// moves by at most sens between neighbouring data sets): it visits the
// candidates in a uniformly random order and stops at the first candidate
// r whose coin, of probability exp(-eps (q* - q_r) / (2 sens)) with q* the
// largest score, comes up heads. The best candidate's coin always does, so
// it stops within len(scores) visits.
//
// # Privacy
//
// eps-DP with respect to any neighbouring relation under which every score
// moves by at most sens (McKenna & Sheldon 2020, Theorem 1; the factor 2
// is for utilities that may move in opposite directions, as under
// replace-one). The claim holds exactly as stated: the order is a
// Fisher-Yates shuffle driven by exact uniform integers (rejection
// sampling on random words), and each coin is an exact Bernoulli(exp(-gamma))
// for the rational gamma = eps (q* - q_r) / (2 sens) (eps, a float64, is a
// dyadic rational), drawn with integer comparisons only (Canonne, Kamath &
// Steinke 2020, Section 5.1, Algorithm 1). No floating-point number enters
// a probability, so floating-point attacks (Mironov 2012) do not apply.
// Any int64 scores and sensitivity are exact: the gaps q* - q_r (up to
// 2^64 - 1) and 2 sens are computed in big integers, not in int64.
// The running time varies with the draws, a timing channel outside the
// claim as for the other secure samplers.
//
// The random words come from src: crypto/rand for Secure, the seeded
// generator for Seeded (bit for bit reproducible for a seed). Another
// Source gives an error wrapping ErrSource: its Uniform draws are float64
// values, not exact random bits. An empty scores, eps not finite and
// positive, or sens < 1 are errors wrapping ErrModel, ErrEpsilon and
// ErrSensitivity.
func PermuteAndFlip(src Source, scores []int64, eps float64, sens int64) (idx int, err error) {
	if len(scores) == 0 {
		return 0, fmt.Errorf("%w: permute-and-flip over no candidates", ErrModel)
	}
	if err := checkEpsilon(eps); err != nil {
		return 0, err
	}
	if sens < 1 {
		return 0, fmt.Errorf("%w: utility sensitivity %d, want >= 1", ErrSensitivity, sens)
	}
	r, err := randomBits(src)
	if err != nil {
		return 0, err
	}
	ws := newWordSource(r)
	defer ws.wipe()
	defer recoverSource(&err)
	best := scores[0]
	for _, q := range scores {
		best = max(best, q)
	}
	// gamma_r = eps (q* - q_r) / (2 sens) = (mE (q* - q_r)) / (2 sens 2^-eE)
	// with eps = mE 2^eE: num and den integers, computed in big.Int since
	// neither the gap (up to 2^64 - 1) nor 2 sens need fit an int64.
	mE, eE := dyadic(eps)
	den := new(big.Int).SetInt64(sens)
	den.Lsh(den, 1)
	numScale := new(big.Int).Set(mE)
	if eE >= 0 {
		numScale.Lsh(numScale, uint(eE))
	} else {
		den.Lsh(den, uint(-eE))
	}
	if len(scores) > math.MaxInt32 {
		return 0, fmt.Errorf("%w: %d candidates, at most %d", ErrModel, len(scores), math.MaxInt32)
	}
	order := make([]int32, len(scores))
	defer clear(order) // the visiting order is part of the secret draw
	for i := range order {
		order[i] = int32(i)
	}
	num, bestBig := new(big.Int), big.NewInt(best)
	for i := range order {
		// Fisher-Yates, drawn as it goes: order[i] is uniform among the
		// candidates not visited yet.
		j := i + int(ws.uniformInt(uint64(len(order)-i)))
		order[i], order[j] = order[j], order[i]
		c := int(order[i])
		if scores[c] == best {
			return c, nil
		}
		num.SetInt64(scores[c])
		num.Sub(bestBig, num)
		num.Mul(num, numScale)
		heads, err := ws.bernoulliExp(num, den)
		if err != nil {
			return 0, err
		}
		if heads {
			return c, nil
		}
	}
	// Unreachable: the best candidate's coin has probability 1.
	return 0, fmt.Errorf("%w: permute-and-flip visited every candidate", ErrModel)
}

// randomBits returns the uniformly random bits of src for the exact
// samplers: crypto/rand for Secure, the generator of Seeded. Other sources
// give an error wrapping ErrSource.
func randomBits(src Source) (io.Reader, error) {
	switch s := src.(type) {
	case secureSource:
		return crand.Reader, nil
	case *seededSource:
		return generatorBits{s.r}, nil
	}
	return nil, fmt.Errorf("%w: the exact samplers need uniformly random bits, which only the secure and the seeded sources give (this one is %q)", ErrSource, SourceName(src))
}

// generatorBits reads the words of a math/rand/v2 generator as bytes,
// little-endian.
type generatorBits struct{ r *rand.Rand }

func (g generatorBits) Read(p []byte) (int, error) {
	var b [8]byte
	for i := 0; i < len(p); i += 8 {
		binary.LittleEndian.PutUint64(b[:], g.r.Uint64())
		copy(p[i:], b[:])
	}
	return len(p), nil
}

// PermuteAndFlipLaw returns the probability that PermuteAndFlip(_, scores,
// eps, sens) returns each index, computed in float64 from the exact
// formula: with p_r = exp(-eps (q* - q_r) / (2 sens)), candidate r is
// returned when it is visited at some position k (probability 1/N for each
// k = 0..N-1) after k others that all failed, and its own coin succeeds:
//
//	P(r) = p_r (1/N) sum_k e_k(1 - p_j, j != r) / C(N-1, k),
//
// e_k the elementary symmetric polynomial of degree k (the mean over the
// k-subsets of the others of the product of their failure probabilities).
// It costs O(N^2) per candidate: for tests and small classes. Inputs are
// checked as by PermuteAndFlip.
func PermuteAndFlipLaw(scores []int64, eps float64, sens int64) ([]float64, error) {
	if len(scores) == 0 {
		return nil, fmt.Errorf("%w: permute-and-flip over no candidates", ErrModel)
	}
	if err := checkEpsilon(eps); err != nil {
		return nil, err
	}
	if sens < 1 {
		return nil, fmt.Errorf("%w: utility sensitivity %d, want >= 1", ErrSensitivity, sens)
	}
	best := scores[0]
	for _, q := range scores {
		best = max(best, q)
	}
	n := len(scores)
	p := make([]float64, n)
	for i, q := range scores {
		// The gap best - q may not fit an int64: take it in float64
		// from the exact difference (both conversions round correctly).
		gap, _ := new(big.Float).SetInt(new(big.Int).Sub(big.NewInt(best), big.NewInt(q))).Float64()
		p[i] = math.Exp(-eps * gap / (2 * float64(sens)))
	}
	out := make([]float64, n)
	e := make([]float64, n)
	for r := range scores {
		clear(e)
		e[0] = 1
		deg := 0
		for j := range scores {
			if j == r {
				continue
			}
			deg++
			for k := deg; k >= 1; k-- {
				e[k] += e[k-1] * (1 - p[j])
			}
		}
		var s, binom float64 = 0, 1 // binom = C(n-1, k)
		for k := 0; k < n; k++ {
			s += e[k] / binom
			binom = binom * float64(n-1-k) / float64(k+1)
		}
		out[r] = p[r] * s / float64(n)
	}
	return out, nil
}
