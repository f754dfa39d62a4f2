package graph

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// The grid on which a declared loss is checked: baseN+1 evenly spaced
// margins in [-baseZ, baseZ] (spacing 1/32), and, when a run's margins
// reach beyond baseZ, tailN more on each side, in a geometric progression
// from baseZ to the end of their range.
const (
	baseZ = 16
	baseN = 1024
	tailN = 256
)

// grid is the margins at which checkLoss evaluates a declared loss, in
// increasing order.
type grid struct {
	z     []float64
	end   float64 // the grid covers [-end, end]
	ratio float64 // the ratio of neighbouring points beyond baseZ, 0: none
	reach float64 // the bound on the run's margins that set end, 0: none
}

// newGrid returns the grid that covers [-reach, reach] and at least
// [-baseZ, baseZ]: the base grid, and tailN geometric points on each side
// beyond it when reach > baseZ. reach must be finite.
func newGrid(reach float64) grid {
	g := grid{end: baseZ, reach: reach}
	n := baseN + 1
	if reach > baseZ {
		g.end, g.ratio = reach, math.Pow(reach/baseZ, 1.0/tailN)
		n += 2 * tailN
	}
	g.z = make([]float64, 0, n)
	tail := func(i int) float64 { // the i-th point beyond baseZ, 1 <= i <= tailN
		if i == tailN {
			return g.end // exactly the end, not its rounding
		}
		return baseZ * math.Pow(g.ratio, float64(i))
	}
	if g.ratio > 0 {
		for i := tailN; i >= 1; i-- {
			g.z = append(g.z, -tail(i))
		}
	}
	h := 2.0 * baseZ / baseN
	for i := 0; i <= baseN; i++ {
		g.z = append(g.z, -baseZ+float64(i)*h)
	}
	if g.ratio > 0 {
		for i := 1; i <= tailN; i++ {
			g.z = append(g.z, tail(i))
		}
	}
	return g
}

// String describes the grid for a certificate's note.
func (g grid) String() string {
	if g.ratio == 0 {
		return fmt.Sprintf("a grid of %d margins in [-%d, %d] (spacing 1/32)", len(g.z), baseZ, baseZ)
	}
	return fmt.Sprintf("a grid of %d margins in [-%.6g, %.6g] (spacing 1/32 in [-%d, %d], ratio %.4g beyond)", len(g.z), g.end, g.end, baseZ, baseZ, g.ratio)
}

// hint returns what an error at margin z adds: nothing inside the base
// grid; beyond it, that the run's margins reach that far and how to narrow
// them.
func (g grid) hint(z float64) string {
	if math.Abs(z) <= baseZ {
		return ""
	}
	return fmt.Sprintf("; the run's margins reach ±%.4g: set Knobs.Radius or raise lambda", g.reach)
}

// marginReach returns the public bound on the margins |<w, x>| that a run
// of the knobs k, with a loss of constants lz and sz, visits on n rows:
// kappa times release.TrainedBound of the run's settings (the radius of the
// projection if set, else L/mu or L times the sum of the steps; L = lz
// kappa, the gradient bound with or without clipping). It reads the public
// settings and n alone, never the rows, and holds before every step (every
// iterate, not only the last, lies in the ball), as long as |l'| <= lz at
// the margins visited: by induction over the steps, for a loss that obeys
// its declaration on [-reach, reach]. It is +Inf when the steps bound no
// norm (steps eta > 2/mu without a radius). Errors are the schedule's
// (trainer.Step.Eta), wrapping trainer.ErrConfig.
func marginReach(k trainer.Config, lz, sz float64, n int) (float64, error) {
	// The zero values of trainer.Config, as documented there.
	kappa, passes, batch := k.Kappa, k.Passes, k.Batch
	if kappa == 0 {
		kappa = 1
	}
	if passes == 0 {
		passes = 10
	}
	if batch == 0 {
		batch = 1
	}
	mu := k.Reg.StrongConvexity()
	step, err := trainer.NewStep(k, sz*kappa*kappa+mu)
	if err != nil {
		return 0, err
	}
	m := (n + batch - 1) / batch
	if m < 1 || uint64(passes)*uint64(m) > trainer.MaxSteps {
		return math.Inf(1), nil // no run: the trainer refuses it
	}
	run := trainer.Run{L: lz * kappa, Mu: mu, Radius: k.Radius, StepsPerPass: m, PassMaxStep: make([]float64, passes)}
	for j := range passes {
		// The built-in schedules do not increase: the first step of a
		// pass is its largest. A custom one is read step by step.
		last := j*m + 1
		if k.Schedule == trainer.Custom {
			last = (j + 1) * m
		}
		for t := j*m + 1; t <= last; t++ {
			eta, err := step.Eta(t)
			if err != nil {
				return 0, err
			}
			run.PassMaxStep[j] = math.Max(run.PassMaxStep[j], eta)
		}
	}
	return kappa * release.TrainedBound(&run), nil
}

// watch makes l record, from now until unwatch, the first margin it is
// evaluated at beyond [-end, end] (with a relative slack of 1e-9 for
// rounding) or with |l'| > Lz.
func (l *glmLoss) watch(end float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.limit, l.breach = end*(1+1e-9), nil
}

// unwatch stops the watch of l and returns what it recorded: nil, or an
// error wrapping ErrDeclared.
func (l *glmLoss) unwatch() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.breach
	l.limit, l.breach = 0, nil
	return b
}

// observe records the first breach of the watch at margin z, label y and
// derivative d; l.mu is held.
func (l *glmLoss) observe(z, y, d float64) {
	if l.limit == 0 || l.breach != nil {
		return
	}
	switch {
	case !(math.Abs(z) <= l.limit):
		l.breach = fmt.Errorf("%w: the run reached margin %.6g, beyond the checked ±%.6g; release refused", ErrDeclared, z, l.limit)
	case !(math.Abs(d) <= l.cons.Lz*(1+1e-9)):
		l.breach = fmt.Errorf("%w: |l'(%.6g, %g)| = %.6g > Lz = %g at a margin of the run; release refused", ErrDeclared, z, y, math.Abs(d), l.cons.Lz)
	}
}
