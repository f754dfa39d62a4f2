package graph

import (
	"fmt"
	"hash"
	"slices"
	"strings"
	"testing"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/losses"
)

// rowTrapOp is the identity, but fails (a panic naming its input) on an
// input whose first element is above 5: an operation that only one
// training row, never the independence probe's synthetic rows, trips.
type rowTrapOp struct{}

func (rowTrapOp) Arity() int { return 1 }
func (rowTrapOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}
func (rowTrapOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	return ds[0].(tensor.Shape).Clone(), nil
}
func (rowTrapOp) Do(in ...gorgonia.Value) (gorgonia.Value, error) {
	v := in[0].(*tensor.Dense).Float64s()
	if v[0] > 5 {
		panic(fmt.Sprintf("rowTrapOp: secret row %v", v))
	}
	return tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(slices.Clone(v))), nil
}
func (rowTrapOp) ReturnsPtr() bool      { return false }
func (rowTrapOp) CallsExtern() bool     { return false }
func (rowTrapOp) OverwritesInput() int  { return -1 }
func (rowTrapOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "rowTrapOp") }
func (rowTrapOp) Hashcode() uint32      { return 11 }
func (rowTrapOp) String() string        { return "rowTrapOp" }
func (rowTrapOp) DiffWRT(int) []bool    { return []bool{true} }
func (rowTrapOp) SymDiff(_ gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	return gorgonia.Nodes{grad}, nil
}

// TestDPSGDRowDependentFailure checks that the run's outcome does not
// depend on one row: a graph that fails (a panic quoting its input) on one
// training row, never on the probe's synthetic rows, trains to the end,
// the row's failures counted as zero gradients (Stats.Failed), its text
// nowhere (a graph that fails on the probe is refused: TestDPSGDRefuses).
func TestDPSGDRowDependentFailure(t *testing.T) {
	X, y := xorRows(60, 3, 9)
	X.Set(17, 0, 7) // the one row that trips the operation
	model := func() *Model {
		g := gorgonia.NewGraph()
		w := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("w"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float64{0.1, -0.2, 0.3}))))
		x := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("x"))
		lab := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName("y"))
		must := gorgonia.Must
		z := must(gorgonia.Sum(must(gorgonia.HadamardProd(w, must(gorgonia.ApplyOp(rowTrapOp{}, x))))))
		loss, err := Expr(losses.Logistic{}, z, lab)
		if err != nil {
			t.Fatal(err)
		}
		return &Model{Graph: g, Params: []*gorgonia.Node{w}, Input: x, Label: lab, Loss: loss}
	}
	var sampled int
	res := runDPSGD(t, dpsgdCfg(model(), 1), X, y, func(_ int, _ *graphSGD, batch []int) {
		if slices.Contains(batch, 17) {
			sampled++
		}
	})
	if sampled == 0 || res.Stats.Failed != sampled {
		t.Errorf("row 17 in %d batches, Stats %+v", sampled, res.Stats)
	}
	if !slices.ContainsFunc(res.Certificate.Assumptions, func(s string) bool { return strings.Contains(s, "fails (an error or a panic)") }) {
		t.Errorf("the certificate does not state that a failing example counts as zero")
	}
}
