package losses_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/stabpriv/stabpriv/losses"
)

// Example looks up losses by name, turns their margin constants into the
// Lipschitz and smoothness constants in the weights for rows clipped to
// ||x|| <= kappa, and evaluates the softmax gradient at seeded margins.
func Example() {
	const kappa = 2
	for _, name := range losses.Names() {
		l, err := losses.ByName(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		c, err := l.Constants(losses.Domain{Kappa: kappa})
		if errors.Is(err, losses.ErrDomain) {
			fmt.Printf("%-11s needs a weight radius and a label bound\n", name)
			continue
		}
		fmt.Printf("%-11s L = %.4f  beta_s = %.4f\n", name, c.Lz*kappa, c.Sz*kappa*kappa)
	}

	r := rand.New(rand.NewPCG(1, 2))
	z := make([]float64, 3)
	for k := range z {
		z[k] = r.NormFloat64()
	}
	g := make([]float64, 3)
	v := losses.Softmax{}.Grad(g, z, 2)
	var sq float64
	for _, gk := range g {
		sq += gk * gk
	}
	fmt.Printf("softmax at z = %.3f, y = 2: loss %.4f, gradient %.4f, norm %.4f <= sqrt 2\n", z, v, g, math.Sqrt(sq))
	// Output:
	// logistic    L = 2.0000  beta_s = 1.0000
	// softmax     L = 2.8284  beta_s = 2.0000
	// huber-hinge L = 2.0000  beta_s = 4.0000
	// huber       L = 2.0000  beta_s = 4.0000
	// squared     needs a weight radius and a label bound
	// softmax at z = [0.379 0.075 0.200], y = 2: loss 1.1245, gradient [0.3886 0.2866 -0.6752], norm 0.8301 <= sqrt 2
}

// ExampleSquared shows that the squared loss has constants only on a
// bounded domain: weights projected onto ||w|| <= R and labels |y| <= B.
func ExampleSquared() {
	_, err := losses.Squared{}.Constants(losses.Domain{Kappa: 1})
	fmt.Println(errors.Is(err, losses.ErrDomain))

	c, err := losses.Squared{}.Constants(losses.Domain{Kappa: 1, Radius: 10, LabelBound: 5})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("L_z = R*kappa + B = %v, S_z = %v\n", c.Lz, c.Sz)
	// Output:
	// true
	// L_z = R*kappa + B = 15, S_z = 1
}

// ExampleNewHuberHinge builds a smoothed hinge narrower than the default:
// closer to the hinge loss, with a larger smoothness constant 1/(2h).
func ExampleNewHuberHinge() {
	l, err := losses.NewHuberHinge(0.1)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, _ := l.Constants(losses.Domain{})
	fmt.Printf("L_z = %v, S_z = %v\n", c.Lz, c.Sz)
	fmt.Printf("l(0.5, +1) = %.4f, l(1.05, +1) = %.4f, l(2, +1) = %v\n", l.Value1(0.5, 1), l.Value1(1.05, 1), l.Value1(2, 1))

	_, err = losses.NewHuberHinge(0)
	fmt.Println(err)
	// Output:
	// L_z = 1, S_z = 5
	// l(0.5, +1) = 0.5000, l(1.05, +1) = 0.0063, l(2, +1) = 0
	// losses: invalid loss parameter: huber-hinge h = 0, want finite > 0
}
