package accountant

import (
	"errors"
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
)

// ErrWindow is wrapped by the error of a PLD accountant whose grid would
// need more than MaxPLDSize points: a noise multiplier so small, or so many
// steps, that the privacy losses spread over too many grid intervals.
// A coarser Interval, or the RDP accountant, still gives a bound.
var ErrWindow = errors.New("accountant: privacy loss distribution too wide for its grid")

// The PLD accountant's defaults and limits.
const (
	// DefaultPLDInterval is the grid interval of PLD's zero Interval,
	// 1e-4 nats: with the connect-the-dots discretization the eps of the
	// MNIST tutorial setting (14,062 steps) moves by less than 1e-3 when it
	// is halved.
	DefaultPLDInterval = 1e-4
	// DefaultPLDTail is PLD's zero Tail: the bound on each of the three
	// truncated masses (above and below the composition's window, and the
	// steps' losses beyond the top of their grid), 1e-15 each.
	DefaultPLDTail = 1e-15
	// MaxPLDSize is the most grid points a PLD accountant uses for one
	// step or for the composition's window (2^23: 64 MiB of float64).
	MaxPLDSize = 1 << 23
)

// Discretization names how PLD puts a privacy loss distribution on its
// grid. The zero value is Pessimistic.
type Discretization int

const (
	// Pessimistic is the connect-the-dots discretization (Doroshenko, Ghazi,
	// Kamath, Kumar & Manurangsi 2022, "Connect the Dots: Tighter Discrete
	// Approximations of Privacy Loss Distributions", Algorithm 1 and its
	// pessimistic-estimate guarantee, Section 4): the masses on the grid whose
	// hockey-stick curve, a function of e^eps, is the polygon through the
	// exact curve's values at the grid points, the chord from (0, 1) below the
	// first and the value at the last beyond it (that mass at +Inf). The curve
	// of a divergence is convex in e^eps, so the polygon is above it at every
	// eps: the grid pair dominates the mechanism's, and domination is kept by
	// composition (Zhu, Dong & Wang 2022, "Optimal Accounting of Differential
	// Privacy via Characteristic Function", the adaptive composition of
	// dominating pairs, Section 3). Its eps is an upper bound, second-order
	// tight in the interval.
	Pessimistic Discretization = iota
	// Optimistic rounds every privacy loss down to the grid (the losses above
	// the last grid point to it, the mass below the first dropped; Koskela,
	// Jalko & Honkela 2020, "Computing Tight Differential Privacy Guarantees
	// Using FFT", their discretization of the PLD, as dp_accounting's
	// pessimistic_estimate=False): the composed loss is below the true one in
	// every outcome, so its delta at each eps, hence its eps, is a lower
	// bound, first-order in the interval times the steps. It is not a privacy
	// guarantee: it says how far the pessimistic bound can be from the truth.
	Optimistic
)

// String returns "pessimistic" or "optimistic".
func (d Discretization) String() string {
	switch d {
	case Pessimistic:
		return "pessimistic"
	case Optimistic:
		return "optimistic"
	}
	return fmt.Sprintf("Discretization(%d)", int(d))
}

// PLD is the privacy loss distribution (PLD) accountant of a
// SampledGaussian: the distribution of the privacy loss of one step,
// discretized on a grid of Interval nats, composed over the steps by
// the fast Fourier transform (Koskela, Jalko & Honkela 2020; Gopi, Lee &
// Wutschitz 2021, "Numerical Composition of Differential Privacy"), and
// the eps read from the composed distribution at delta, for each of the two
// directions of add/remove-one neighbours (the larger is the guarantee).
//
// The two directions (Zhu, Dong & Wang 2022, the tight dominating pairs of
// Poisson subsampling under add/remove, their Section 5): with
// P = N(1, sigma^2) and Q = N(0, sigma^2) (one step at sensitivity 1),
// removing a row compares (1-q) Q + q P with Q, and adding one compares Q
// with (1-q) Q + q P. The hockey-stick divergence of each, at e^eps, is
// in closed form from the Gaussian mechanism's (Balle & Wang 2018,
// "Improving the Gaussian Mechanism for Differential Privacy", Theorem 8):
// remove: 1 - e^eps for e^eps <= 1-q, else q H(a) with a = (e^eps -
// (1-q))/q; add: 0 for e^eps >= 1/(1-q), else c H(a) with c = 1 - (1-q)
// e^eps and a = q e^eps / c; H(a) = Phi(1/(2 sigma) - sigma log a) - a
// Phi(-1/(2 sigma) - sigma log a).
//
// What is truncated, and how it is paid for (each mass is at most Tail,
// and the three are added to delta, so that the guarantee holds in exact
// arithmetic): the losses of one step above the top of its grid are the
// grid's mass at +Inf (top chosen where the step's delta is at most
// Tail/T, so that T steps put at most Tail there); the composition is
// computed on a window of the composed losses by a cyclic convolution,
// which wraps the mass outside the window into it (adding mass, never
// removing it), and the composed mass above and below the window is
// bounded by Chernoff's bound on the discretized step's moment generating
// function, exp(-lambda u + T log E[exp(lambda L)]), the window chosen so
// that each is at most Tail.
//
// The floating-point rounding is outside the proof; an allowance for it,
// T (|s - 1| + 1e-14) + 1e-12 with s the sum of the discretized step's
// masses (1 in exact arithmetic), is added to delta too (RoundingDelta): the
// tests measure the transform's rounding at a tenth of it or less, and
// compare the composition with direct convolutions. The bits of eps depend
// on the build (GOAMD64=v3 fuses multiply-adds, also inside package math):
// they moved by 3e-9 of eps at the MNIST tutorial's setting.
//
// The zero value is the pessimistic accountant at DefaultPLDInterval and
// DefaultPLDTail.
type PLD struct {
	// Interval is the grid's interval, in nats, finite and > 0; 0 means
	// DefaultPLDInterval.
	Interval float64
	// Tail bounds each truncated mass, in (0, 1e-6]; 0 means
	// DefaultPLDTail.
	Tail float64
	// Discretization is Pessimistic (an upper bound, the zero value) or
	// Optimistic (a lower bound).
	Discretization Discretization
}

// withDefaults returns p with its zero fields set, or an error wrapping
// ErrInvalid.
func (p PLD) withDefaults() (PLD, error) {
	if p.Interval == 0 {
		p.Interval = DefaultPLDInterval
	}
	if p.Tail == 0 {
		p.Tail = DefaultPLDTail
	}
	switch {
	case !check.Positive(p.Interval):
		return p, fmt.Errorf("%w: PLD interval %v, want finite > 0", ErrInvalid, p.Interval)
	case !(p.Tail > 0 && p.Tail <= 1e-6):
		return p, fmt.Errorf("%w: PLD tail %v, want 0 < tail <= 1e-6", ErrInvalid, p.Tail)
	case p.Discretization != Pessimistic && p.Discretization != Optimistic:
		return p, fmt.Errorf("%w: %v", ErrInvalid, p.Discretization)
	}
	return p, nil
}

// String names the accountant and its parameters (the zero fields as
// their defaults), as a certificate states them.
func (p PLD) String() string {
	d, err := p.withDefaults()
	if err != nil {
		return fmt.Sprintf("PLD(invalid: %v)", err)
	}
	return fmt.Sprintf("PLD (%s, interval %g, tail %g)", d.Discretization, d.Interval, d.Tail)
}

// PLDGuarantee is the (eps, delta) guarantee a PLD accountant gives a
// SampledGaussian under add/remove-one neighbours.
type PLDGuarantee struct {
	// Epsilon is the larger of Remove and Add, >= 0.
	Epsilon float64
	// Delta is the delta asked for; it includes TailDelta.
	Delta float64
	// Remove and Add are the eps of removing a row and of adding one.
	Remove, Add float64
	// TailDelta is the part of Delta that pays for the truncations (the
	// larger of the two directions'): at most 3 Tail.
	TailDelta float64
	// RoundingDelta is the part of Delta allowed for the floating-point
	// rounding (the larger of the two directions').
	RoundingDelta float64
	// PLD is the accountant, its zero fields set to the defaults.
	PLD PLD
	// Size is the largest number of grid points composed (the transform's
	// length).
	Size int
}

// ReplaceOne returns the budget g gives under replace-one neighbours by
// group privacy of two, as Guarantee.ReplaceOne does: (2 eps, (1 +
// exp(eps)) delta).
func (g PLDGuarantee) ReplaceOne() dp.Budget { return replaceOne(g.Epsilon, g.Delta) }

// direction is one side of add/remove-one neighbours.
type direction int

const (
	remove direction = iota
	add
)

// String returns "remove" or "add".
func (d direction) String() string {
	if d == remove {
		return "remove"
	}
	return "add"
}

// Epsilon returns the PLD guarantee of g at delta in (0, 1): the smallest
// eps whose delta, by the composed discretized distribution of each
// direction plus its truncated masses, is at most delta, the larger of
// the two directions. It returns an error wrapping ErrInvalid for a bad
// argument, ErrWindow when the grid would exceed MaxPLDSize points, and
// ErrNoBound when the truncated masses alone exceed delta.
func (p PLD) Epsilon(g SampledGaussian, delta float64) (PLDGuarantee, error) {
	p, err := p.withDefaults()
	if err != nil {
		return PLDGuarantee{}, err
	}
	if err := g.Validate(); err != nil {
		return PLDGuarantee{}, err
	}
	if !check.OpenUnit(delta) {
		return PLDGuarantee{}, fmt.Errorf("%w: delta = %v, want 0 < delta < 1", ErrInvalid, delta)
	}
	r := PLDGuarantee{Delta: delta, PLD: p}
	if g.SampleRate == 0 {
		return r, nil
	}
	for _, d := range []direction{remove, add} {
		if d == add && g.SampleRate == 1 {
			// Both directions compare N(1, sigma^2) with N(0, sigma^2).
			r.Add = r.Remove
			break
		}
		c, err := composeDirection(g, d, p)
		if err != nil {
			return PLDGuarantee{}, err
		}
		eps, err := c.epsilon(delta)
		if err != nil {
			return PLDGuarantee{}, fmt.Errorf("%w (%s direction)", err, d)
		}
		if d == remove {
			r.Remove = eps
		} else {
			r.Add = eps
		}
		r.TailDelta = max(r.TailDelta, c.tailDelta)
		r.RoundingDelta = max(r.RoundingDelta, c.roundDelta)
		r.Size = max(r.Size, c.size)
	}
	r.Epsilon = max(r.Remove, r.Add)
	return r, nil
}

// Delta returns the delta at eps (finite) of g by the PLD accountant: the
// larger of the two directions' hockey-stick divergences at e^eps of the
// composed discretized distributions, with the truncated masses added
// (Pessimistic) or taken off (Optimistic, clamped at 0). Errors are
// Epsilon's.
func (p PLD) Delta(g SampledGaussian, eps float64) (float64, error) {
	p, err := p.withDefaults()
	if err != nil {
		return 0, err
	}
	if err := g.Validate(); err != nil {
		return 0, err
	}
	if !check.Finite(eps) {
		return 0, fmt.Errorf("%w: eps = %v, want finite", ErrInvalid, eps)
	}
	if g.SampleRate == 0 {
		return 0, nil
	}
	var delta float64
	for _, d := range []direction{remove, add} {
		if d == add && g.SampleRate == 1 {
			break
		}
		c, err := composeDirection(g, d, p)
		if err != nil {
			return 0, err
		}
		delta = max(delta, c.delta(eps))
	}
	return delta, nil
}

// replaceOne is group privacy of two for an add/remove (eps, delta).
func replaceOne(eps, delta float64) dp.Budget {
	return dp.Budget{Epsilon: 2 * eps, Delta: (1 + math.Exp(eps)) * delta}
}
