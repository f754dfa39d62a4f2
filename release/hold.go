package release

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/stabpriv/stabpriv/perturb"
)

// ErrHeld reports a release, a simulation or a reveal of weights (or of a
// prepared objective) that a Hold holds: while a private selection runs,
// only its hold releases them.
var ErrHeld = errors.New("release: held by a private selection")

// Hold is a hold on several prepared releases for a private selection
// (package selection), which releases fresh copies of them many times
// inside one budget and outputs one. Each Release of the hold draws new
// noise for a copy of the prepared state; the copies are runs of the
// selection, not releases on their own, and their certificates say so
// (Private is false) until the selection completes the one it outputs.
//
// While held, a prepared release cannot be released, simulated or revealed
// elsewhere (ErrHeld), so that nothing reuses it outside the selection's
// budget; another hold on it waits for Close. Close ends the hold: after a secure selection has released
// anything, every held release is used up (the trained weights are wiped).
// A seeded hold is a simulation: it releases with seeded sources only, its
// certificates are not private, and Close leaves the releases as they were.
type Hold struct {
	ps       []held
	seeded   bool
	released bool
	closed   bool
}

// held is what a Hold needs of a prepared release: acquire checks that it
// can still be released and marks it held by h (it fails when another hold
// has it); releaseCopy releases a fresh copy for h; unhold ends h's hold and,
// with usedUp, uses the release up.
type held interface {
	Prepared
	acquire(h *Hold, seeded bool) error
	releaseCopy(ctx context.Context, h *Hold, src perturb.Source) (*Outcome, error)
	unhold(h *Hold, usedUp bool)
}

// holds guards the taking and ending of holds: a hold takes all its
// releases at once or none, and waits on holdEnded while another hold has
// one of them, so two selections over shared releases never wait on each
// other in a cycle.
var (
	holds     sync.Mutex
	holdEnded = sync.NewCond(&holds)
)

// NewHold holds ps, waiting while another hold has one of them. It fails,
// holding nothing, when a release was used up already, or when weights were
// revealed in the clear (by Reveal or Simulate) and the selection is not
// seeded (a seeded selection is a simulation whose certificate says it is
// not private).
func NewHold(ps []Prepared, seeded bool) (*Hold, error) {
	hps := make([]held, len(ps))
	for i, p := range ps {
		hp, ok := p.(held)
		if !ok {
			return nil, fmt.Errorf("%w: candidate %d: a %T is not a release of package release", ErrConfig, i, p)
		}
		hps[i] = hp
	}
	holds.Lock()
	defer holds.Unlock()
	for {
		h := &Hold{seeded: seeded}
		var err error
		for i, hp := range hps {
			if err = hp.acquire(h, seeded); err != nil {
				if !errors.Is(err, ErrHeld) {
					err = fmt.Errorf("candidate %d: %w", i, err)
				}
				break
			}
			h.ps = append(h.ps, hp)
		}
		if err == nil {
			return h, nil
		}
		for _, hp := range h.ps {
			hp.unhold(h, false)
		}
		if !errors.Is(err, ErrHeld) {
			return nil, err
		}
		holdEnded.Wait()
	}
}

// Release releases a fresh copy of the i-th held release with noise from
// src (nil: perturb.Secure()), at the budget it was prepared for. The
// outcome's certificate has Private false: it is one run of the selection.
// A seeded hold refuses any source but a seeded one.
func (h *Hold) Release(ctx context.Context, i int, src perturb.Source) (*Outcome, error) {
	switch {
	case h == nil:
		return nil, fmt.Errorf("%w: no hold", ErrConfig)
	case h.closed:
		return nil, fmt.Errorf("%w: the hold was closed", ErrReleased)
	case i < 0 || i >= len(h.ps):
		return nil, fmt.Errorf("%w: release %d of a hold of %d", ErrConfig, i, len(h.ps))
	}
	if src == nil {
		src = perturb.Secure()
	}
	if h.seeded && perturb.SourceName(src) != perturb.SourceSeeded {
		return nil, fmt.Errorf("%w: a seeded hold (a simulation) releases with a seeded source only", ErrConfig)
	}
	h.released = true
	out, err := h.ps[i].releaseCopy(ctx, h, src)
	if err != nil {
		return nil, err
	}
	out.Certificate.Private = false
	return out, nil
}

// Close ends the hold. After a release from a hold that is not seeded,
// every held release is used up: the trained weights are wiped, and a later
// Release of any of them is refused. Closing twice, or a nil hold, does
// nothing.
func (h *Hold) Close() {
	if h == nil {
		return
	}
	holds.Lock()
	defer holds.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	usedUp := h.released && !h.seeded
	for _, p := range h.ps {
		p.unhold(h, usedUp)
	}
	holdEnded.Broadcast()
}

// Fresh is the release-once and hold state of a prepared release that
// makes a fresh run for each draw from its prepared state (objective
// perturbation minimizes afresh, DP-SGD trains afresh), so that a Hold's
// copies and the release itself are calls of its run. A Prepared that
// embeds a *Fresh (NewFresh) has Release and what a Hold needs of it, also
// in another package (package release/dpsgd).
type Fresh struct {
	what string
	run  func(ctx context.Context, src perturb.Source, extra []string) (*Outcome, error)

	mu       sync.Mutex
	released bool
	hold     *Hold // the selection holding it, nil for none
}

// NewFresh returns the state of a release whose draws are calls of run
// (src never nil); what names the run in messages ("DP-SGD run").
func NewFresh(what string, run func(ctx context.Context, src perturb.Source, extra []string) (*Outcome, error)) *Fresh {
	return &Fresh{what: what, run: run}
}

// IfUnreleased calls do unless the release was made (by Release, or by a
// Hold that used it up), holding the state so that no release starts
// meanwhile, and returns its error; after the release it returns released,
// which should wrap ErrReleased, without calling do. It is for
// Prepared.Trained.
func (f *Fresh) IfUnreleased(released error, do func() error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.released {
		return released
	}
	return do()
}

// Release makes the run with the randomness of src once: a second release,
// or one while a Hold holds it, is refused.
func (f *Fresh) Release(ctx context.Context, src perturb.Source, extra ...string) (*Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hold != nil {
		return nil, ErrHeld
	}
	if f.released {
		return nil, fmt.Errorf("%w: a second %s on the same rows needs its own budget and is refused", ErrReleased, f.what)
	}
	out, err := f.run(ctx, src, extra)
	if err == nil {
		f.released = true
	}
	return out, err
}

func (f *Fresh) acquire(h *Hold, _ bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.hold != nil && f.hold != h:
		return ErrHeld
	case f.released:
		return fmt.Errorf("%w: the %s was released", ErrReleased, f.what)
	}
	f.hold = h
	return nil
}

func (f *Fresh) releaseCopy(ctx context.Context, h *Hold, src perturb.Source) (*Outcome, error) {
	f.mu.Lock()
	ok := f.hold == h && !f.released
	f.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: the hold does not hold this %s", ErrReleased, f.what)
	}
	return f.run(ctx, src, nil)
}

func (f *Fresh) unhold(h *Hold, usedUp bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hold != h {
		return
	}
	f.hold = nil
	if usedUp {
		f.released = true
	}
}
