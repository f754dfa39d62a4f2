package trainer

import (
	"math/rand/v2"

	"github.com/stabpriv/stabpriv/internal/poisson"
)

// PoissonRate returns the probability q with which the batches of a
// DP-SGD run of expected batch b from n rows include each row: b/n
// rounded down to the largest float64 that is an integer multiple of
// 2^-64 (1 when b = n), at most b/n and within a relative 2^-52 of it.
// The accountant takes this q. It panics unless 1 <= b <= n.
func PoissonRate(n, b int) float64 { return poisson.Rate(n, b) }

// PoissonSampler draws the batches of DP-SGD by Poisson sampling, exactly
// and in expected O(qn + 1) time a step: in each step every one of n rows
// independently with probability q = PoissonRate(n, b), from coins that
// never read the rows. Sample returns the next step's rows, Rate returns
// q and Peek the next step's first row when it is drawn. TrainDPSGD draws
// its batches with one, and so does the DP-SGD of a program's own Gorgonia
// graph (package graph): the same coins give the same batches. The method
// (Geometric gaps between the rows drawn, by exact comparisons) and the
// proof of its law are in internal/poisson.
type PoissonSampler = poisson.Sampler

// NewPoissonSampler returns the sampler of batches of expected size b from
// n rows, drawing from coins (64 uniform bits per Uint64). It panics unless
// 1 <= b <= n and coins is not nil (a programmer's error: the callers check
// their settings first).
func NewPoissonSampler(coins rand.Source, n, b int) *PoissonSampler {
	return poisson.New(coins, n, b)
}
