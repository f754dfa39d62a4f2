package losses

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestCheckLabel lists the losses by hand because each row states the answer
// for that loss's label set; the conformance kit's labels check covers every
// loss of All.
func TestCheckLabel(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		loss    Loss
		y       float64
		classes int
		ok      bool
	}{
		{Logistic{}, 1, 0, true},
		{Logistic{}, -1, 0, true},
		{Logistic{}, 0, 0, false},
		{Logistic{}, 2, 0, false},
		{Logistic{}, nan, 0, false},
		{Logistic{}, inf, 0, false},
		{HuberHinge{H: 0.5}, -1, 0, true},
		{HuberHinge{H: 0.5}, 0, 0, false},
		{HuberHinge{H: 0.5}, 0.999, 0, false},
		{HuberHinge{H: 0.5}, nan, 0, false},
		{Huber{Delta: 1}, -3.7, 0, true},
		{Huber{Delta: 1}, 0, 0, true},
		{Huber{Delta: 1}, nan, 0, false},
		{Huber{Delta: 1}, -inf, 0, false},
		{Squared{}, 1e6, 0, true},
		{Squared{}, inf, 0, false},
		{Softmax{}, 0, 3, true},
		{Softmax{}, 2, 3, true},
		{Softmax{}, 3, 3, false},
		{Softmax{}, -1, 3, false},
		{Softmax{}, 1.5, 3, false},
		{Softmax{}, nan, 3, false},
		{Softmax{}, inf, 3, false},
		{Softmax{}, 0, 1, false},
		{Softmax{}, 0, 0, false},
		{Softmax{}, 1, 2, true},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/y=%v/K=%d", c.loss.Name(), c.y, c.classes), func(t *testing.T) {
			err := c.loss.CheckLabel(c.y, c.classes)
			if c.ok && err != nil {
				t.Errorf("CheckLabel = %v, want nil", err)
			}
			if !c.ok && !errors.Is(err, ErrLabel) {
				t.Errorf("CheckLabel = %v, want an error wrapping ErrLabel", err)
			}
		})
	}
}

func TestSquaredConstants(t *testing.T) {
	cases := []struct {
		dom    Domain
		wantLz float64 // 0: an error wrapping ErrDomain
	}{
		{Domain{}, 0},
		{Domain{Kappa: 1}, 0},
		{Domain{Kappa: 1, Radius: 2}, 0},
		{Domain{Kappa: 1, LabelBound: 2}, 0},
		{Domain{Radius: 2, LabelBound: 3}, 0},
		{Domain{Kappa: 1, Radius: -2, LabelBound: 3}, 0},
		{Domain{Kappa: 1, Radius: math.NaN(), LabelBound: 3}, 0},
		{Domain{Kappa: 1, Radius: math.Inf(1), LabelBound: 3}, 0},
		{Domain{Kappa: 1, Radius: 2, LabelBound: 3}, 5},
		{Domain{Kappa: 0.5, Radius: 4, LabelBound: 1}, 3},
	}
	for _, c := range cases {
		got, err := Squared{}.Constants(c.dom)
		if c.wantLz == 0 {
			if !errors.Is(err, ErrDomain) {
				t.Errorf("Constants(%+v) = %+v, %v; want an error wrapping ErrDomain", c.dom, got, err)
			}
			continue
		}
		if err != nil || got != (Constants{Lz: c.wantLz, Sz: 1, Convex: true, Smooth: true, C2: true, LipHess: true}) {
			t.Errorf("Constants(%+v) = %+v, %v; want L_z = %v, S_z = 1, convex, smooth, C2, a constant Hessian", c.dom, got, err, c.wantLz)
		}
	}
}

func TestParameters(t *testing.T) {
	bad := []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1)}
	for _, v := range bad {
		if _, err := NewHuberHinge(v); !errors.Is(err, ErrParam) {
			t.Errorf("NewHuberHinge(%v) error = %v, want ErrParam", v, err)
		}
		if _, err := NewHuber(v); !errors.Is(err, ErrParam) {
			t.Errorf("NewHuber(%v) error = %v, want ErrParam", v, err)
		}
		if _, err := (HuberHinge{H: v}).Constants(Domain{}); !errors.Is(err, ErrParam) {
			t.Errorf("HuberHinge{%v}.Constants error = %v, want ErrParam", v, err)
		}
		if _, err := (Huber{Delta: v}).Constants(Domain{}); !errors.Is(err, ErrParam) {
			t.Errorf("Huber{%v}.Constants error = %v, want ErrParam", v, err)
		}
	}
	hh, err := NewHuberHinge(0.25)
	if err != nil || hh.H != 0.25 {
		t.Fatalf("NewHuberHinge(0.25) = %v, %v", hh, err)
	}
	if c, err := hh.Constants(Domain{}); err != nil || c != (Constants{Lz: 1, Sz: 2, Convex: true, Smooth: true}) {
		t.Errorf("HuberHinge{0.25}.Constants = %+v, %v; want L_z = 1, S_z = 2, smooth, not C2", c, err)
	}
	hu, err := NewHuber(2.5)
	if err != nil || hu.Delta != 2.5 {
		t.Fatalf("NewHuber(2.5) = %v, %v", hu, err)
	}
	if c, err := hu.Constants(Domain{}); err != nil || c != (Constants{Lz: 2.5, Sz: 1, Convex: true, Smooth: true}) {
		t.Errorf("Huber{2.5}.Constants = %+v, %v; want L_z = 2.5, S_z = 1, smooth, not C2", c, err)
	}
}

// TestPiecewiseValues checks the closed forms of the two piecewise losses on
// each piece.
func TestPiecewiseValues(t *testing.T) {
	hh := HuberHinge{H: 0.5}
	hu := Huber{Delta: 2}
	cases := []struct {
		name string
		got  float64
		want float64
	}{
		{"hinge m > 1+h", hh.Value1(2, 1), 0},
		{"hinge m = 1+h", hh.Value1(-1.5, -1), 0},
		{"hinge m = 1", hh.Value1(1, 1), 0.125},     // h^2/(4h) = h/4
		{"hinge m = 1-h", hh.Value1(0.5, 1), 0.5},   // (2h)^2/(4h) = h = 1-m
		{"hinge m < 1-h", hh.Value1(3, -1), 4},      // 1-m
		{"hinge deriv m < 1-h", hh.Deriv(3, -1), 1}, // -y
		{"hinge deriv band", hh.Deriv(1, 1), -0.5},  // -(1+h-m)/(2h)
		{"huber |r| <= delta", hu.Value1(3, 2), 0.5},
		{"huber r > delta", hu.Value1(10, 2), 14}, // 2(8 - 1)
		{"huber r < -delta", hu.Value1(-6, 2), 14},
		{"huber deriv r < -delta", hu.Deriv(-6, 2), -2},
		{"squared", Squared{}.Value1(5, 2), 4.5},
		{"squared deriv", Squared{}.Deriv(5, 2), 3},
	}
	for _, c := range cases {
		if !near(c.got, c.want, 1e-15) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestByName pins the documented names and default parameters by hand, so a
// change of the registry (All) shows here; TestAll checks All against ByName.
func TestByName(t *testing.T) {
	want := map[string]Loss{
		"logistic":    Logistic{},
		"softmax":     Softmax{},
		"huber-hinge": HuberHinge{H: 0.5},
		"huber":       Huber{Delta: 1},
		"squared":     Squared{},
	}
	names := Names()
	if len(names) != len(want) {
		t.Errorf("Names() = %v, want %d names", names, len(want))
	}
	for _, n := range names {
		l, err := ByName(n)
		if err != nil || l != want[n] || l.Name() != n {
			t.Errorf("ByName(%q) = %v, %v; want %v", n, l, err, want[n])
		}
	}
	for _, n := range []string{"", "Logistic", "hinge", "huber_hinge"} {
		l, err := ByName(n)
		if !errors.Is(err, ErrUnknown) || l != nil {
			t.Errorf("ByName(%q) = %v, %v; want an error wrapping ErrUnknown", n, l, err)
			continue
		}
		for _, valid := range names {
			if !strings.Contains(err.Error(), valid) {
				t.Errorf("ByName(%q) error %q does not list %q", n, err, valid)
			}
		}
	}
}

// TestProgrammerErrorsPanic checks the documented panics on shape errors
// and on unchecked softmax labels.
func TestProgrammerErrorsPanic(t *testing.T) {
	cases := []struct {
		name string
		f    func()
	}{
		{"scalar value of 2 margins", func() { Logistic{}.Value([]float64{1, 2}, 1) }},
		{"scalar grad into short dst", func() { Huber{Delta: 1}.Grad(nil, []float64{1}, 1) }},
		{"scalar hess of 2 margins", func() { Squared{}.Hess(make([]float64, 1), []float64{1, 2}, 1) }},
		{"softmax label out of range", func() { Softmax{}.Value([]float64{1, 2}, 2) }},
		{"softmax non-integer label", func() { Softmax{}.Value([]float64{1, 2}, 0.5) }},
		{"softmax grad length", func() { Softmax{}.Grad(make([]float64, 1), []float64{1, 2}, 0) }},
		{"softmax hess length", func() { Softmax{}.Hess(make([]float64, 2), []float64{1, 2}, 0) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			c.f()
		})
	}
}
