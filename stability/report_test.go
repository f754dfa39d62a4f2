package stability

import (
	"testing"

	"github.com/stabpriv/stabpriv/trainer"
)

// TestTinyScalesRefused checks that a bound in the range where float64
// rounding is absolute is refused: with a clipping norm of 1e-320 the
// realized distance of neighbours was measured at 2.4 times Delta.
func TestTinyScalesRefused(t *testing.T) {
	run := handRun()
	run.Lambda = 0.1
	run.Schedule = trainer.BoundedInverseT.String()
	fillSteps(run)
	run.Clip = 1e-320
	rep, err := Analyze(run)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Chosen != 0 {
		t.Fatalf("route %v chosen with clip 1e-320, Delta %v", rep.Chosen, rep.Delta)
	}
	for _, e := range rep.Routes {
		if e.Applies {
			t.Errorf("route %v applies", e.Route)
		}
	}
	run.Clip = 1e-200
	if rep, err := Analyze(run); err != nil || rep.Chosen == 0 {
		t.Errorf("clip 1e-200 refused: %v %+v", err, rep)
	}
}
