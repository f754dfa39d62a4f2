package regularizers_test

import (
	"fmt"

	"github.com/stabpriv/stabpriv/regularizers"
)

// Example takes one proximal SGD step on an elastic-net penalty: the
// gradient step uses the smooth (L2) part, the prox soft-thresholds for
// the L1 part, and MinNormSubgrad measures how far w is from optimal.
func Example() {
	reg := regularizers.ElasticNet{Lambda: 0.2, L1Ratio: 0.5}
	if err := reg.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("mu = %.2f, L2 weight %.2f, L1 weight %.2f\n", reg.StrongConvexity(), reg.L2Weight(), reg.L1Weight())

	w := []float64{1, -0.5, 0.04, 0}
	dataGrad := []float64{0.5, -0.5, 0.02, 0.05}
	const eta = 0.5
	g := append([]float64(nil), dataGrad...)
	reg.AddSmoothGrad(g, w)
	for i := range w {
		w[i] -= eta * g[i]
	}
	reg.Prox(w, eta) // soft threshold at eta*0.1 = 0.05
	fmt.Printf("w = %.3f, R(w) = %.4f\n", w, reg.Value(w))

	// With the data gradient at the new w, the minimum-norm subgradient of
	// the objective is 0 where a zero weight is optimal (|g_i| <= L1 weight).
	newGrad := []float64{-0.1, 0.2, 0.05, -0.2}
	sub := make([]float64, len(w))
	norm := reg.MinNormSubgrad(sub, newGrad, w)
	fmt.Printf("min-norm subgradient %.4f, norm %.4f\n", sub, norm)

	err := regularizers.ElasticNet{Lambda: 1, L1Ratio: 2}.Validate()
	fmt.Println(err)
	// Output:
	// mu = 0.10, L2 weight 0.10, L1 weight 0.10
	// w = [0.650 -0.175 0.000 0.000], R(w) = 0.1052
	// min-norm subgradient [0.0650 0.0825 0.0000 -0.1000], norm 0.1450
	// regularizers: invalid setting: l1 ratio = 2, want in [0, 1]
}
