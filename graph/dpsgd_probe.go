package graph

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/stabpriv/stabpriv/release/dpsgd"
	"github.com/stabpriv/stabpriv/trainer"
)

// probeRows is the number of synthetic rows of probeIndependence.
const probeRows = dpsgd.GraphProbeRows

// probeIndependence checks that the graph of kern computes each example's
// loss and gradient at the parameters w from that example alone, with no
// state carried from one run to the next: on probeRows public synthetic
// rows of d elements (seeded standard normal draws scaled to norm about 1,
// labels -1 and +1 in turn, no training row read), the loss and gradient
// of each row must be the same, bit for bit, when the rows run in reverse
// order, and those of rows 1, 2, ... must be the same when row 0 is
// replaced. A graph that fails is refused with an error wrapping ErrGraph.
// The check is cheap (3 probeRows runs of the graph) and refutes, it
// cannot prove: a graph whose state does not show on the probe passes.
func probeIndependence(kern trainer.ExampleKernel, w []float64, d int) error {
	r := rand.New(rand.NewPCG(0x67726170, 0x68))
	rows := make([][]float64, probeRows+1) // the last replaces row 0
	for i := range rows {
		rows[i] = make([]float64, d)
		for j := range rows[i] {
			rows[i][j] = r.NormFloat64() / math.Sqrt(float64(d))
		}
	}
	label := func(i int) float64 { return float64(2*(i%2) - 1) }
	type result struct {
		loss float64
		grad []float64
	}
	eval := func(x []float64, y float64) (result, error) {
		g := make([]float64, kern.Dim())
		l, err := kern.ExampleGrad(g, w, x, y)
		return result{l, g}, err
	}
	same := func(a, b result) bool {
		if math.Float64bits(a.loss) != math.Float64bits(b.loss) {
			return false
		}
		for j := range a.grad {
			if math.Float64bits(a.grad[j]) != math.Float64bits(b.grad[j]) {
				return false
			}
		}
		return true
	}
	base := make([]result, probeRows)
	for i := range base {
		var err error
		if base[i], err = eval(rows[i], label(i)); err != nil {
			return fmt.Errorf("graph: the independence probe: %w", err)
		}
	}
	for i := probeRows - 1; i >= 0; i-- {
		got, err := eval(rows[i], label(i))
		if err != nil {
			return fmt.Errorf("graph: the independence probe: %w", err)
		}
		if !same(got, base[i]) {
			return fmt.Errorf("%w: probe row %d's loss or gradient changed with the order of the rows; the graph must not keep state", ErrGraph, i)
		}
	}
	for i := range base {
		x := rows[i]
		if i == 0 {
			x = rows[probeRows]
		}
		got, err := eval(x, label(i))
		if err != nil {
			return fmt.Errorf("graph: the independence probe: %w", err)
		}
		if i > 0 && !same(got, base[i]) {
			return fmt.Errorf("%w: probe row %d's loss or gradient changed when row 0 changed; an example's loss must read only its row", ErrGraph, i)
		}
	}
	return nil
}
