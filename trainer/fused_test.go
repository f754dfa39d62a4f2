package trainer

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stabpriv/stabpriv/internal/kernel"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
)

// stepTrace runs the passes of cfg on n x d synthetic rows through
// newNative and pass (through passInPlace if inPlace) and returns the
// weights after every step, the examples in the order the steps took them,
// and the returned weights. set, when not nil, changes the driver before
// the first pass.
func stepTrace(t *testing.T, cfg Config, n, d int, set func(e *native), inPlace bool) (steps [][]float64, visited []int, w []float64) {
	t.Helper()
	X, y := synthData(n, d, 0, 5)
	p := newTestProblem(t, cfg, X, y)
	p.obs = &observer{
		example: func(_, i int, _, _ []float64) { visited = append(visited, i) },
		step:    func(_ int, _ float64, w []float64) { steps = append(steps, slices.Clone(w)) },
	}
	e, err := newNative(p)
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	if set != nil {
		set(e)
	}
	for j := 0; j < cfg.Passes; j++ {
		if inPlace {
			passInPlace(e, e.smp.pass(j))
			continue
		}
		if _, _, err := e.pass(context.Background(), j); err != nil {
			t.Fatal(err)
		}
	}
	return steps, visited, slices.Clone(e.weights())
}

// setBlocks makes passFused copy the rows into blocks of the given number
// of float64s (fusedBlockFloats), whatever their size, or, for floats = 0,
// read them in place, until the end of the test.
func setBlocks(t *testing.T, floats int) {
	f, m, h := fusedBlockFloats, fusedBlockMinBytes, rowsOnHugePages
	t.Cleanup(func() { fusedBlockFloats, fusedBlockMinBytes, rowsOnHugePages = f, m, h })
	fusedBlockFloats, fusedBlockMinBytes = floats, 0
	rowsOnHugePages = func([]float64) bool { return false }
	if floats == 0 {
		fusedBlockMinBytes = math.Inf(1)
	}
}

// passInPlace is passFused written plainly for rows of up to gatherMaxD
// features: the same steps on the rows, norms and labels read in place,
// with kernel.ShrinkDot, without hints. TestPassFusedBlocks holds
// passFused to it.
func passInPlace(e *native, order []int) {
	p, d, sgd := e.p, e.d, e.sgd
	w := e.w[:d]
	z := dot(w, p.x[order[0]*d:(order[0]+1)*d])
	for s, i := range order {
		e.t++
		eta, err := sgd.Eta(e.t)
		if err != nil {
			panic(err)
		}
		x := p.x[i*d : (i+1)*d]
		g := e.margin.Deriv(z, p.y[i])
		g *= sgd.ClipScale(math.Abs(g) * p.norm[i])
		e.gz[0] = g
		e.obs.example(e.t, i, x, e.gz)
		a, thr := sgd.decay(eta)
		if s+1 < len(order) {
			j := order[s+1]
			z = kernel.ShrinkDot(w, x, a, eta*g, thr, p.x[j*d:(j+1)*d])
		} else {
			sgd.move(w, eta, eta*g, x)
		}
		if e.avg != nil {
			sgd.Average(e.avg, e.w, e.t)
		}
		e.obs.step(e.t, eta, e.w)
	}
}

// TestPassFusedBlocks checks that passFused, which reads large rows from
// copies of each block of the pass order, takes the examples in the pass
// order and gives after every step the bits of the same loop on the rows in
// place (passInPlace): with blocks of one example, of a few (the pass not a
// multiple of the block), and of the whole pass, and reading in place, for
// both schedules, with clipping and averaging.
func TestPassFusedBlocks(t *testing.T) {
	const n, d = 53, 6
	enet := regularizers.ElasticNet{Lambda: 0.05, L1Ratio: 0.3}
	for _, cfg := range []Config{
		{Loss: losses.Logistic{}, Reg: enet, Clip: 0.2, Passes: 3},
		{Loss: losses.Huber{Delta: 0.5}, Reg: enet, Schedule: BoundedInverseT, Average: true, Passes: 2},
	} {
		// floats = 0: the rows in place.
		for _, floats := range []int{0, 1, d, 4 * d, 7*d + 3, 1 << 13} {
			t.Run(fmt.Sprintf("%s/floats=%d", cfg.Loss.Name(), floats), func(t *testing.T) {
				setBlocks(t, floats)
				var blk int
				got, gotOrder, gotW := stepTrace(t, cfg, n, d, func(e *native) {
					if !e.fuse {
						t.Fatal("passFused is not selected")
					}
					blk = e.fblock
				}, false)
				if want := min(n, max(1, floats/d)); floats > 0 && blk != want || floats == 0 && blk != 0 {
					t.Fatalf("blocks of %d examples, want %d", blk, want)
				}
				ref, refOrder, refW := stepTrace(t, cfg, n, d, nil, true)
				if !slices.Equal(gotOrder, refOrder) {
					t.Fatalf("examples %v, in place %v", gotOrder, refOrder)
				}
				if len(got) != len(ref) {
					t.Fatalf("%d steps, in place %d", len(got), len(ref))
				}
				for s := range got {
					if !sameBits(got[s], ref[s]) {
						t.Fatalf("step %d: weights %v, in place %v", s+1, got[s], ref[s])
					}
				}
				if !sameBits(gotW, refW) {
					t.Fatalf("weights %v, in place %v", gotW, refW)
				}
			})
		}
	}
}

// TestFusedBlockHugePages checks that passFused reads rows in place, not
// by blocks, when they lie on huge pages, and that only rows of
// fusedBlockMinBytes or more are looked up.
func TestFusedBlockHugePages(t *testing.T) {
	const n, d = 53, 6
	for _, huge := range []bool{false, true} {
		setBlocks(t, 4*d)
		calls := 0
		rowsOnHugePages = func(x []float64) bool {
			if len(x) != n*d {
				t.Errorf("rowsOnHugePages of %d floats, want the %d of the rows", len(x), n*d)
			}
			calls++
			return huge
		}
		var blk int
		stepTrace(t, Config{Loss: losses.Logistic{}, Reg: regularizers.L2(0.01), Passes: 1}, n, d, func(e *native) { blk = e.fblock }, false)
		want := 4 // 4d floats: 4 examples
		if huge {
			want = 0
		}
		if blk != want {
			t.Errorf("huge pages %v: blocks of %d examples, want %d", huge, blk, want)
		}
		if calls != 1 {
			t.Errorf("huge pages %v: %d look-ups, want 1", huge, calls)
		}
	}
	fusedBlockMinBytes = 8*n*d + 1
	if got := fusedBlock(n, d, func() bool { t.Error("looked up rows below fusedBlockMinBytes"); return false }); got != 0 {
		t.Errorf("fusedBlock below fusedBlockMinBytes = %d, want 0", got)
	}
}

// TestPassFusedWideMatchesStep checks that on rows of more than gatherMaxD
// features, which the example-by-example step trained before passFused
// took them, passFused gives after every step the bits of that step
// (margins summed in dot's order by kernel.ShrinkDdot), so that seeded runs
// on wide rows keep their weights: feature counts with every remainder mod
// 4, blocks of one example and of several, both schedules, clipping and
// averaging, reading in place or in blocks.
func TestPassFusedWideMatchesStep(t *testing.T) {
	if !gonumDdotPairs {
		t.Skip("gonum's Ddot is not its amd64 assembly on this build: passFused does not take rows of more than gatherMaxD features")
	}
	const n = 23
	enet := regularizers.ElasticNet{Lambda: 0.05, L1Ratio: 0.3}
	for _, cfg := range []Config{
		{Loss: losses.Logistic{}, Reg: enet, Clip: 0.2, Passes: 2},
		{Loss: losses.Logistic{}, Reg: regularizers.L2(0.01), Schedule: BoundedInverseT, Average: true, Passes: 2},
	} {
		for _, d := range []int{gatherMaxD + 1, gatherMaxD + 2, gatherMaxD + 3, gatherMaxD + 4, 1000} {
			for _, floats := range []int{0, 1, 3 * d} {
				t.Run(fmt.Sprintf("%s/d=%d/floats=%d", cfg.Schedule, d, floats), func(t *testing.T) {
					setBlocks(t, floats)
					got, gotOrder, gotW := stepTrace(t, cfg, n, d, func(e *native) {
						if !e.fuse {
							t.Fatal("passFused is not selected")
						}
					}, false)
					want, wantOrder, wantW := stepTrace(t, cfg, n, d, func(e *native) { e.fuse = false }, false)
					if !slices.Equal(gotOrder, wantOrder) {
						t.Fatalf("examples %v, the step's %v", gotOrder, wantOrder)
					}
					for s := range got {
						if !sameBits(got[s], want[s]) {
							t.Fatalf("step %d: weights differ from the step's", s+1)
						}
					}
					if len(got) != len(want) || !sameBits(gotW, wantW) {
						t.Fatalf("%d steps, the step's %d; or the weights differ", len(got), len(want))
					}
				})
			}
		}
	}
}

// TestOrderAhead checks that the orders passFused draws during the pass
// before (orderAhead) are the sampler's, pass by pass, on a pass of many
// rounds of swaps that is not a multiple of a round, and that a run of one
// pass draws none.
func TestOrderAhead(t *testing.T) {
	const n, d, passes = 1001, 3, 4
	cfg := Config{Loss: losses.Logistic{}, Reg: regularizers.L2(0.01), Passes: passes, Seed: 9}
	var drew []int
	var a *orderAhead
	_, visited, _ := stepTrace(t, cfg, n, d, func(e *native) {
		a = e.ahead
		if e.ahead == nil {
			t.Fatal("no order drawn ahead")
		}
		e.obs.step = func(int, float64, []float64) {
			if e.j+1 == passes {
				return // the last pass draws none
			}
			if e.ahead.pass != e.j+1 {
				t.Fatalf("pass %d draws the order of pass %d", e.j, e.ahead.pass)
			}
			if len(drew) == e.j {
				drew = append(drew, e.ahead.pass)
			}
		}
	}, false)
	if len(drew) != passes-1 || a.pass != passes-1 {
		t.Fatalf("orders drawn ahead in %d passes, want %d", len(drew), passes-1)
	}
	smp := testSampler(n, d, cfg.Seed)
	for j := range passes {
		if got, want := visited[j*n:(j+1)*n], smp.pass(j); !slices.Equal(got, want) {
			t.Fatalf("pass %d: the order differs from the sampler's", j)
		}
	}
	cfg.Passes = 1
	stepTrace(t, cfg, n, d, func(e *native) {
		if e.ahead != nil {
			t.Fatal("an order drawn ahead in a run of one pass")
		}
	}, false)
}
