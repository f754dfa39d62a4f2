package release

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/stabpriv/stabpriv/perturb"
)

// Hold is a hold on several prepared releases for a private selection
// (package selection), which releases fresh copies of them many times
// inside one budget and outputs one: each Release of the hold draws new
// noise for a copy of the prepared state, without using it up. Close ends
// the hold and uses every prepared release up unless the selection was a
// seeded simulation.
//
// While held, the trained weights of output-perturbation releases are
// locked, so that no release elsewhere reuses them outside the selection's
// budget; the locks are taken in a fixed global order, so selections over
// the same releases in another order do not deadlock.
type Hold struct {
	ps     []held
	states []*trainedState
	closed bool
}

// held is what a Hold needs of a prepared release: the state to lock (nil
// for none), a check that it can still be released (called with the state
// locked), a release of a fresh copy, and using it up.
type held interface {
	Prepared
	state() *trainedState
	check(seeded bool) error
	releaseCopy(ctx context.Context, src perturb.Source) (*Outcome, error)
	useUp()
}

// NewHold holds ps. It fails, holding nothing, when a release was used up
// already, or when weights were revealed in the clear and the selection is
// not seeded (a seeded selection is a simulation whose certificate says it
// is not private).
func NewHold(ps []Prepared, seeded bool) (*Hold, error) {
	h := &Hold{}
	for i, p := range ps {
		hp, ok := p.(held)
		if !ok {
			return nil, fmt.Errorf("%w: candidate %d: a %T is not a release of package release", ErrConfig, i, p)
		}
		h.ps = append(h.ps, hp)
		if s := hp.state(); s != nil && !slices.Contains(h.states, s) {
			h.states = append(h.states, s)
		}
	}
	slices.SortFunc(h.states, func(a, b *trainedState) int { return cmp.Compare(a.id, b.id) })
	for _, s := range h.states {
		s.mu.Lock()
	}
	for i, p := range h.ps {
		if err := p.check(seeded); err != nil {
			h.unlock()
			return nil, fmt.Errorf("candidate %d: %w", i, err)
		}
	}
	return h, nil
}

// Release releases a fresh copy of the i-th held release with noise from
// src, at the budget it was prepared for. An index outside the held
// releases (every index, for a zero or nil Hold) is an error wrapping
// ErrConfig.
func (h *Hold) Release(ctx context.Context, i int, src perturb.Source) (*Outcome, error) {
	if h == nil {
		return nil, fmt.Errorf("%w: a nil Hold (use NewHold)", ErrConfig)
	}
	if i < 0 || i >= len(h.ps) {
		return nil, fmt.Errorf("%w: release %d of a hold on %d releases (a zero Hold holds none: use NewHold)", ErrConfig, i, len(h.ps))
	}
	if h.closed {
		return nil, fmt.Errorf("%w: the hold was closed", ErrReleased)
	}
	return h.ps[i].releaseCopy(ctx, src)
}

// Close ends the hold. With usedUp, every held release is used up: the
// trained weights are wiped, and a later Release of any of them is refused.
// Closing a nil Hold does nothing.
func (h *Hold) Close(usedUp bool) {
	if h == nil || h.closed {
		return
	}
	if usedUp {
		for _, p := range h.ps {
			p.useUp()
		}
	}
	h.unlock()
}

func (h *Hold) unlock() {
	h.closed = true
	for _, s := range h.states {
		s.mu.Unlock()
	}
}
