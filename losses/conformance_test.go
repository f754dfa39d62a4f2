package losses_test

import (
	"reflect"
	"testing"

	"github.com/stabpriv/stabpriv/internal/losstest"
	"github.com/stabpriv/stabpriv/losses"
)

// TestConformance runs the conformance kit (internal/losstest) on every
// built-in loss, and on the parametrized losses at a second parameter
// (a narrow hinge band, a small Huber threshold).
func TestConformance(t *testing.T) {
	for _, c := range losstest.Cases() {
		losstest.Run(t, c)
	}
	for _, l := range []losses.Loss{losses.HuberHinge{H: 0.05}, losses.Huber{Delta: 0.3}} {
		for _, c := range losstest.CasesOf(l) {
			losstest.Run(t, c)
		}
	}
}

// TestAll checks the registry: All holds one loss per name, in the order of
// Names, and ByName returns the same value.
func TestAll(t *testing.T) {
	all, names := losses.All(), losses.Names()
	if len(all) != len(names) {
		t.Fatalf("All has %d losses, Names %d", len(all), len(names))
	}
	for i, l := range all {
		if l.Name() != names[i] {
			t.Errorf("All()[%d] is %q, Names()[%d] %q", i, l.Name(), i, names[i])
		}
		got, err := losses.ByName(l.Name())
		if err != nil || !reflect.DeepEqual(got, l) {
			t.Errorf("ByName(%q) = %v, %v; want %v", l.Name(), got, err, l)
		}
	}
	all[0] = nil
	if losses.All()[0] == nil {
		t.Error("All returns the registry itself, not a copy")
	}
}
