package losses

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnknown is returned by ByName for a name that is not a built-in loss.
var ErrUnknown = errors.New("losses: unknown loss")

// registry lists the built-in losses in the order Names reports them, with
// the default parameters ByName uses.
var registry = []Loss{
	Logistic{},
	Softmax{},
	HuberHinge{H: DefaultHuberHingeH},
	Huber{Delta: DefaultHuberDelta},
	Squared{},
}

// All returns one value of every built-in loss, with the default parameters
// ByName uses, in the order of Names. Softmax, the multiclass loss, takes its
// number of classes K from the problem (Outputs, CheckLabel), not from the
// value. Tests that must cover every loss range over All (the conformance
// kit, internal/losstest, does); a new built-in loss is a file and a line in
// the registry.
func All() []Loss { return append([]Loss(nil), registry...) }

// Names returns the names ByName accepts, in a fixed order.
func Names() []string {
	names := make([]string, len(registry))
	for i, l := range registry {
		names[i] = l.Name()
	}
	return names
}

// ByName returns the built-in loss with the given name: "logistic",
// "softmax", "huber-hinge" (h = DefaultHuberHingeH), "huber" (delta =
// DefaultHuberDelta) or "squared". For another width or threshold use
// NewHuberHinge or NewHuber. An unknown name gives an error wrapping
// ErrUnknown that lists the valid names.
func ByName(name string) (Loss, error) {
	for _, l := range registry {
		if l.Name() == name {
			return l, nil
		}
	}
	return nil, fmt.Errorf("%w: %q, want one of %s", ErrUnknown, name, strings.Join(Names(), ", "))
}
