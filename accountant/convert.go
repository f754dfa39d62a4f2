package accountant

import (
	"errors"
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
)

// ErrNoBound is wrapped by the error of an accountant that finds no finite
// eps: a conversion in which no order gives one (every RDP is +Inf: more
// noise, fewer steps or a lower sample rate), or a PLD whose truncated
// masses and rounding allowance alone reach delta (a larger delta).
var ErrNoBound = errors.New("accountant: no finite eps")

// DefaultOrders returns a new copy of the orders at which the RDP curve is
// evaluated by default: 1.1, 1.2, ..., 10.9, then 11, 12, ..., 63, then 128,
// 256, 512 and 1024, the grid of google/differential-privacy's dp_accounting
// (DEFAULT_RDP_ORDERS), which covers the optimal order of the Gaussian
// mechanisms in the usual regimes (eps from about 0.05 to 50).
func DefaultOrders() []float64 {
	orders := make([]float64, 0, 99+53+4)
	for x := 1; x < 100; x++ {
		orders = append(orders, 1+float64(x)/10)
	}
	for a := 11; a < 64; a++ {
		orders = append(orders, float64(a))
	}
	return append(orders, 128, 256, 512, 1024)
}

// Conversion names a conversion from RDP to (eps, delta)-DP. The zero value
// is Improved.
type Conversion int

const (
	// Improved is eps = rdp + log((alpha-1)/alpha) - (log(delta) +
	// log(alpha)) / (alpha-1) (Balle, Barthe, Gaboardi, Hsu & Sato 2020,
	// "Hypothesis Testing Interpretations and Renyi Differential Privacy",
	// Theorem 21; Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for
	// Differential Privacy", Proposition 12), and eps = 0 at an order where
	// delta >= sqrt(1 - exp(-rdp)), the Bretagnolle-Huber bound on the total
	// variation by the KL divergence, which is at most the RDP at any order
	// (as google/differential-privacy's dp_accounting, compute_epsilon,
	// does). It is below Classical at every order.
	Improved Conversion = iota
	// Classical is eps = rdp + log(1/delta) / (alpha-1) (Mironov 2017,
	// "Renyi Differential Privacy", Proposition 3): what TF Privacy's
	// rdp_accountant and Abadi et al. 2016's moments accountant report.
	Classical
)

// String returns the conversion's name: "improved" or "classical".
func (c Conversion) String() string {
	switch c {
	case Improved:
		return "improved"
	case Classical:
		return "classical"
	}
	return fmt.Sprintf("Conversion(%d)", int(c))
}

// ParseConversion returns the conversion named s ("improved" or
// "classical"), or an error wrapping ErrInvalid.
func ParseConversion(s string) (Conversion, error) {
	for _, c := range []Conversion{Improved, Classical} {
		if s == c.String() {
			return c, nil
		}
	}
	return 0, fmt.Errorf("%w: conversion %q, want improved or classical", ErrInvalid, s)
}

// epsilonAt returns the eps of the conversion c at the order alpha > 1 of
// RDP rdp >= 0 (+Inf for rdp = +Inf) and delta in (0, 1).
func (c Conversion) epsilonAt(alpha, rdp, delta float64) float64 {
	classical := rdp + math.Log(1/delta)/(alpha-1)
	if c == Classical || math.IsInf(rdp, 1) {
		return classical
	}
	if delta*delta+math.Expm1(-rdp) >= 0 {
		return 0
	}
	improved := rdp + math.Log1p(-1/alpha) - (math.Log(delta)+math.Log(alpha))/(alpha-1)
	return min(improved, classical)
}

// Guarantee is an (eps, delta)-DP guarantee converted from an RDP curve,
// with the order that gives it.
type Guarantee struct {
	// Epsilon is the smallest eps >= 0 over the orders.
	Epsilon float64
	// Delta is the delta the conversion was asked for.
	Delta float64
	// Order is the order alpha at which Epsilon is reached (the first such
	// order of the grid on a tie).
	Order float64
	// Conversion is the conversion used.
	Conversion Conversion
	// Excluded lists the orders whose RDP is +Inf (a fractional order whose
	// series did not converge, or a mechanism with no finite RDP there):
	// they take no part in the minimum. Nil when there are none.
	Excluded []float64
}

// Convert returns the (eps, delta) guarantee of the RDP curve rdp at the
// orders orders (each finite and > 1, rdp[i] >= 0 or +Inf), the minimum
// over the orders of c's eps. delta must be in (0, 1). It returns an error
// wrapping ErrInvalid for a bad argument, and one wrapping ErrNoBound when
// every rdp is +Inf.
func Convert(orders, rdp []float64, delta float64, c Conversion) (Guarantee, error) {
	switch {
	case len(orders) != len(rdp):
		return Guarantee{}, fmt.Errorf("%w: %d orders for %d RDP values", ErrInvalid, len(orders), len(rdp))
	case len(orders) == 0:
		return Guarantee{}, fmt.Errorf("%w: no order", ErrInvalid)
	case !check.OpenUnit(delta):
		return Guarantee{}, fmt.Errorf("%w: delta = %v, want 0 < delta < 1", ErrInvalid, delta)
	case c != Improved && c != Classical:
		return Guarantee{}, fmt.Errorf("%w: %v", ErrInvalid, c)
	}
	g := Guarantee{Epsilon: math.Inf(1), Delta: delta, Conversion: c}
	for i, a := range orders {
		if err := checkOrder(a); err != nil {
			return Guarantee{}, err
		}
		r := rdp[i]
		if !(r >= 0) {
			return Guarantee{}, fmt.Errorf("%w: RDP %v at order %v, want >= 0", ErrInvalid, r, a)
		}
		if math.IsInf(r, 1) {
			g.Excluded = append(g.Excluded, a)
			continue
		}
		if eps := c.epsilonAt(a, r, delta); eps < g.Epsilon {
			g.Epsilon, g.Order = eps, a
		}
	}
	if math.IsInf(g.Epsilon, 1) {
		return Guarantee{}, fmt.Errorf("%w at any order: the RDP is +Inf at all %d orders: add noise, or take fewer steps or a lower sample rate", ErrNoBound, len(orders))
	}
	g.Epsilon = max(g.Epsilon, 0)
	return g, nil
}

// Epsilon returns the (eps, delta) guarantee of g under add/remove-one
// neighbours, for delta in (0, 1): Convert of g.Curve(orders) (orders nil
// for DefaultOrders) by the conversion c.
func (g SampledGaussian) Epsilon(delta float64, c Conversion, orders []float64) (Guarantee, error) {
	if orders == nil {
		orders = DefaultOrders()
	}
	rdp, err := g.Curve(orders)
	if err != nil {
		return Guarantee{}, err
	}
	return Convert(orders, rdp, delta, c)
}

// ReplaceOne returns the budget the guarantee g (stated for add/remove-one
// neighbours) gives under replace-one neighbours, the relation of the
// module's certificates: a replacement is a removal then an addition, so
// the (eps, delta) inequality applied twice, through the data set without
// the replaced row, gives (2 eps, (1 + exp(eps)) delta) (group privacy for
// a group of two; Vadhan 2017, "The Complexity of Differential Privacy",
// Lemma 2.2, states the looser k exp((k-1) eps) delta for k). It is not
// tight; a certificate that keeps add/remove-one neighbours for the
// mechanism must say so instead. Its Delta is 1 or more (no guarantee) when
// (1 + exp(eps)) delta is.
func (g Guarantee) ReplaceOne() dp.Budget {
	return dp.Budget{Epsilon: 2 * g.Epsilon, Delta: (1 + math.Exp(g.Epsilon)) * g.Delta}
}
