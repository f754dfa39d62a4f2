package stability

import (
	"math"
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

// TestMaxOfIsMathMax checks the recursion's maximum against math.Max on
// the special values, bit for bit (any NaN for a NaN).
func TestMaxOfIsMathMax(t *testing.T) {
	vals := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1, 1e300, 5e-324}
	for _, x := range vals {
		for _, y := range vals {
			a, b := maxOf(x, y), math.Max(x, y)
			if math.Float64bits(a) != math.Float64bits(b) && !(math.IsNaN(a) && math.IsNaN(b)) {
				t.Errorf("maxOf(%v, %v) = %v, math.Max %v", x, y, a, b)
			}
		}
	}
}

// TestRecursionOverflow is a record whose route-4 recursion overflows and
// then meets a step with rho = 0 (an Inf times 0): the nominal value stays
// +Inf, as math.Max keeps +Inf against a NaN.
func TestRecursionOverflow(t *testing.T) {
	r := handRun()
	r.N, r.Lambda, r.L1Ratio, r.Mu = 2, 1, 0, 1
	r.Schedule = "unknown"
	r.Passes, r.StepsPerPass = 2, 2
	r.PassMaxStep, r.PassMinStep = []float64{1, 1e200}, []float64{1, 1e200}
	rep, err := Analyze(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rep.Routes {
		if e.Route == RouteStronglyConvexSGD && !math.IsInf(e.Nominal, 1) {
			t.Errorf("route 4 nominal %v, want +Inf", e.Nominal)
		}
	}
}
