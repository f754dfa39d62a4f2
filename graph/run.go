package graph

import (
	"fmt"
	"slices"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// runner executes the operations a node needs, in topological order, on
// the caller's goroutine: what a gorgonia.TapeMachine does for such a
// graph, without its per-run costs (RunAll starts a goroutine on a locked
// OS thread and waits on channels; Reset drops every register, so that
// each operation allocates a fresh result at every run). Each operation
// is the graph's own (Op.Do, with Gorgonia's kernels); from the second run
// on, an operation writes into its result of the run before when it can
// do so without touching another value of the graph:
//
//   - an operation with UsePreallocDo writes into that result, cleared
//     to zeros first as a fresh result is (the gradient of Slice adds into
//     it); if it refuses, as some do for a scalar result, it runs by Do
//     from then on;
//   - a unary operation that overwrites its input (UnsafeDo, Gorgonia's
//     in-place form) runs on a copy of its input made into that result.
//
// A result that shares memory with any other value of the graph (a view,
// as a reshape returns) is never written into: such an operation runs by
// Do at every run. Input nodes are read through their bound values, which
// the caller updates in place.
type runner struct {
	steps []runStep
	vals  []gorgonia.Value // by position in the order
	pos   map[*gorgonia.Node]int
	runs  int
}

type runStep struct {
	op   gorgonia.Op
	in   []int
	args []gorgonia.Value // scratch for the inputs' values
	out  int
	mode reuseMode
}

// float64s is a float64 tensor's view of its elements (*tensor.Dense).
type float64s interface{ Float64s() []float64 }

// reuseMode is how a step writes its result from the second run on.
type reuseMode int

const (
	fresh    reuseMode = iota // Op.Do, a new result
	prealloc                  // UsePreallocDo into the last result
	inPlace                   // copy the input into the last result, UnsafeDo on it
)

// newRunner returns a runner of the operations that the roots need (nodes
// of one graph).
func newRunner(roots ...*gorgonia.Node) (*runner, error) { return newCutRunner(nil, roots...) }

// newCutRunner returns a runner of the operations that the roots need, with
// the nodes of cut taken as inputs: their operations, and the nodes that
// only they need, are not run, and the caller sets their values (set)
// before each run.
func newCutRunner(cut []*gorgonia.Node, roots ...*gorgonia.Node) (*runner, error) {
	if len(roots) == 0 {
		return nil, fmt.Errorf("%w: nothing to run", ErrGraph)
	}
	sub := roots[0].Graph().ExactSubgraphRoots(roots...)
	sorted, err := gorgonia.Sort(sub)
	if err != nil {
		return nil, fmt.Errorf("%w: sorting the graph: %w", ErrGraph, err)
	}
	need := needed(sub, cut, roots)
	r := &runner{pos: make(map[*gorgonia.Node]int, len(sorted))}
	for i := len(sorted) - 1; i >= 0; i-- { // Sort puts the root first
		n := sorted[i]
		if need != nil && !need[n] {
			continue
		}
		p := len(r.vals)
		r.pos[n] = p
		r.vals = append(r.vals, nil)
		if slices.Contains(cut, n) {
			continue
		}
		if n.Op() == nil {
			v := n.Value()
			if v == nil {
				return nil, fmt.Errorf("%w: input node %v has no value", ErrGraph, n.Name())
			}
			r.vals[p] = v
			continue
		}
		s := runStep{op: n.Op(), out: p}
		for it := sub.From(n.ID()); it.Next(); {
			c := it.Node().(*gorgonia.Node)
			q, ok := r.pos[c]
			if !ok {
				return nil, fmt.Errorf("%w: node %v comes before its input %v", ErrGraph, n.Name(), c.Name())
			}
			s.in = append(s.in, q)
		}
		s.args = make([]gorgonia.Value, len(s.in))
		r.steps = append(r.steps, s)
	}
	return r, nil
}

// needed returns the nodes of sub that the roots need when the nodes of
// cut are inputs, or nil (every node) when cut is empty.
func needed(sub *gorgonia.ExprGraph, cut, roots []*gorgonia.Node) map[*gorgonia.Node]bool {
	if len(cut) == 0 {
		return nil
	}
	need := make(map[*gorgonia.Node]bool)
	stack := slices.Clone(roots)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if need[n] {
			continue
		}
		need[n] = true
		if slices.Contains(cut, n) {
			continue
		}
		for it := sub.From(n.ID()); it.Next(); {
			stack = append(stack, it.Node().(*gorgonia.Node))
		}
	}
	return need
}

// set sets the value of n, a node of the runner's cut, for the next run.
func (r *runner) set(n *gorgonia.Node, v gorgonia.Value) { r.vals[r.pos[n]] = v }

// value returns the value of n at the last run.
func (r *runner) value(n *gorgonia.Node) gorgonia.Value { return r.vals[r.pos[n]] }

// run executes every step once.
func (r *runner) run() error {
	for i := range r.steps {
		s := &r.steps[i]
		for j, p := range s.in {
			s.args[j] = r.vals[p]
		}
		v, err := s.exec(r.vals[s.out])
		if err != nil {
			return fmt.Errorf("%w: %v: %w", ErrGraph, s.op, err)
		}
		r.vals[s.out] = v
	}
	if r.runs == 0 {
		r.chooseModes()
	}
	r.runs++
	return nil
}

// exec runs the step's operation, writing into last when its mode allows.
func (s *runStep) exec(last gorgonia.Value) (gorgonia.Value, error) {
	switch {
	case s.mode == prealloc:
		zero(last)
		v, err := s.op.(gorgonia.UsePreallocDoer).UsePreallocDo(last, s.args...)
		if err == nil {
			return v, nil
		}
		// As the TapeMachine does: an operation that cannot write into
		// this result (a scalar, for some) computes a new one, and does
		// from now on.
		s.mode = fresh
	case s.mode == inPlace:
		copy(last.(float64s).Float64s(), s.args[0].(float64s).Float64s())
		return s.op.(gorgonia.UnsafeDoer).UnsafeDo(last)
	}
	return s.op.Do(s.args...)
}

// chooseModes sets each step's mode after the first run, from the values
// it produced: a result may be written into again only if its memory is
// its own.
func (r *runner) chooseModes() {
	for i := range r.steps {
		s := &r.steps[i]
		out := r.vals[s.out]
		if out == nil || out.MemSize() == 0 || r.shared(s.out) {
			continue
		}
		if _, ok := s.op.(gorgonia.UsePreallocDoer); ok && zeroable(out) {
			s.mode = prealloc
			continue
		}
		_, unsafe := s.op.(gorgonia.UnsafeDoer)
		if unsafe && len(s.in) == 1 && s.op.OverwritesInput() == 0 {
			in := r.vals[s.in[0]]
			fo, okOut := out.(float64s)
			fi, okIn := in.(float64s)
			if okOut && okIn && in.Shape().Eq(out.Shape()) && len(fo.Float64s()) == len(fi.Float64s()) {
				s.mode = inPlace
			}
		}
	}
}

// zeroable reports whether zero can clear v.
func zeroable(v gorgonia.Value) bool {
	switch v.(type) {
	case *tensor.Dense, *gorgonia.F64:
		return true
	}
	return false
}

// zero sets the elements of a zeroable value to 0: the state of a fresh
// result, which some operations' UsePreallocDo add into (the gradient of
// Slice increments its result).
func zero(v gorgonia.Value) {
	switch t := v.(type) {
	case *tensor.Dense:
		t.Zero()
	case *gorgonia.F64:
		*t = 0
	}
}

// shared reports whether the memory of value i overlaps that of any other
// value.
func (r *runner) shared(i int) bool {
	a := r.vals[i]
	lo, hi := a.Uintptr(), a.Uintptr()+a.MemSize()
	for j, b := range r.vals {
		if j == i || b == nil || b.MemSize() == 0 {
			continue
		}
		if blo := b.Uintptr(); blo < hi && lo < blo+b.MemSize() {
			return true
		}
	}
	return false
}
