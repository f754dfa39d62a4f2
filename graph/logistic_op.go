package graph

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/stabpriv/stabpriv/losses"
)

// logisticOp is an elementwise Gorgonia operation on float64 values, with
// the formulas of losses.Logistic: softplus(m) = log(1 + e^m) (Value1 at z
// = -m, y = 1: max(m, 0) + log1p(e^-|m|)) and its derivative sigmoid(m)
// (-Deriv at z = -m, y = 1). Gorgonia's own Softplus returns m for m > 16
// and its derivative, the Sigmoid op, returns 1 for m > 19 (errors up to
// 1e-7 and 6e-9); a stable softplus built from Rectify, Exp and Log1p is
// exact but its derivative takes 13 operations. As one operation each, the
// margin gradient of the logistic loss takes 6 operations in all, and its
// bits are those of losses.Logistic.Deriv at the same margin.
//
// It runs on float64 scalars and tensors (any other dtype is an error when
// it runs) and is differentiated symbolically (gorgonia.Grad,
// Backpropagate; the TapeMachine and this package's runner execute it); it
// has no DoDiff, so a LispMachine's automatic differentiation does not see
// through it.
type logisticOp struct{ deriv bool }

var (
	softplusOp = logisticOp{}
	sigmoidOp  = logisticOp{deriv: true}
)

// apply is the operation on one element.
func (op logisticOp) apply(m float64) float64 {
	if op.deriv {
		return -losses.Logistic{}.Deriv(-m, 1)
	}
	return losses.Logistic{}.Value1(-m, 1)
}

func (op logisticOp) Arity() int { return 1 }

func (op logisticOp) Type() hm.Type {
	a := hm.TypeVariable('a')
	return hm.NewFnType(a, a)
}

func (op logisticOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(ds) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(ds))
	}
	s, ok := ds[0].(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("%v: input of unknown shape", op)
	}
	return s.Clone(), nil
}

func (op logisticOp) Do(inputs ...gorgonia.Value) (gorgonia.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(inputs))
	}
	switch v := inputs[0].(type) {
	case *gorgonia.F64:
		return gorgonia.NewF64(op.apply(float64(*v))), nil
	case *tensor.Dense:
		if v.Dtype() == tensor.Float64 {
			if v.IsView() {
				v = v.Materialize().(*tensor.Dense)
			}
			out := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(v.Shape().Clone()...))
			return op.UsePreallocDo(out, v)
		}
	}
	return nil, fmt.Errorf("%v: input of type %T (%v), want float64", op, inputs[0], inputs[0].Dtype())
}

// UsePreallocDo writes the result into prealloc, a float64 tensor of the
// input's size.
func (op logisticOp) UsePreallocDo(prealloc gorgonia.Value, inputs ...gorgonia.Value) (gorgonia.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(inputs))
	}
	in, ok1 := inputs[0].(*tensor.Dense)
	out, ok2 := prealloc.(*tensor.Dense)
	if !ok1 || !ok2 || in.Dtype() != tensor.Float64 || out.Dtype() != tensor.Float64 ||
		in.RequiresIterator() || out.RequiresIterator() || len(in.Float64s()) != in.Size() || len(out.Float64s()) != in.Size() {
		return nil, fmt.Errorf("%v: input %T and result %T, want contiguous float64 tensors of one size", op, inputs[0], prealloc)
	}
	dst := out.Float64s()
	for i, m := range in.Float64s() {
		dst[i] = op.apply(m)
	}
	return prealloc, nil
}

func (op logisticOp) ReturnsPtr() bool     { return false }
func (op logisticOp) CallsExtern() bool    { return false }
func (op logisticOp) OverwritesInput() int { return -1 }

func (op logisticOp) WriteHash(h hash.Hash) { fmt.Fprint(h, op.String()) }

func (op logisticOp) Hashcode() uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

func (op logisticOp) String() string {
	if op.deriv {
		return "stabprivSigmoid"
	}
	return "stabprivSoftplus"
}

// DiffWRT implements gorgonia.SDOp: the operation is differentiable in
// its input.
func (op logisticOp) DiffWRT(inputs int) []bool { return []bool{true} }

// SymDiff implements gorgonia.SDOp: d softplus(m) = sigmoid(m) dm, and
// d sigmoid(m) = s (1 - s) dm with s = sigmoid(m).
func (op logisticOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%v: %d inputs, want 1", op, len(inputs))
	}
	var d *gorgonia.Node
	var err error
	if op.deriv {
		var c *gorgonia.Node
		if c, err = gorgonia.Sub(constant(1), output); err == nil {
			if c, err = gorgonia.HadamardProd(output, c); err == nil {
				d, err = gorgonia.HadamardProd(grad, c)
			}
		}
	} else {
		var s *gorgonia.Node
		if s, err = gorgonia.ApplyOp(sigmoidOp, inputs[0]); err == nil {
			d, err = gorgonia.HadamardProd(grad, s)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%v: derivative: %w", op, err)
	}
	return gorgonia.Nodes{d}, nil
}
