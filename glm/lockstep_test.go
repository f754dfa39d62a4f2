package glm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
)

// TestGradsBits checks that Grads gives every objective the bits of its
// own Grad, for every loss (logistic with labels other than -1 and +1
// too, clipped and not), on both sides of minPartRows, for neighbours
// that skip a row at a block's or a part's edge or inside one and add
// extra rows, and for the objective itself among them; a second call
// keeps nothing of the first.
func TestGradsBits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const d = 7
	for _, lc := range allLosses() {
		for _, clip := range []float64{0, 0.3} {
			if clip > 0 && lc.classes > 0 {
				continue
			}
			for _, n := range []int{150, minPartRows + 7} {
				t.Run(fmt.Sprintf("%s/clip=%v/n=%d", lc.name, clip, n), func(t *testing.T) {
					X, y := rows(n, d, lc.loss, lc.classes, uint64(n))
					if lc.name == "logistic" {
						y[5] = 0.5 // a soft label: the loop's own path
					}
					o := mustNew(t, X, y, Config{Loss: lc.loss, Classes: lc.classes, Lambda: 0.01, Clip: clip})
					half, _ := partBounds(n, 1, o.parts())
					ex := mat.NewDense(2, d, randVec(r, 2*d, 0.3))
					ey := y[10:12]
					obs := []*Objective{o}
					for _, skip := range []int{0, 5, passRows - 1, passRows, 2*passRows + 3, half - 1, half, n - 1, -1} {
						for _, extra := range []int{0, 1, 2} {
							if skip < 0 && extra == 0 {
								continue
							}
							var nx *mat.Dense
							if extra > 0 {
								nx = ex.Slice(0, extra, 0, d).(*mat.Dense)
							}
							nb, err := o.Neighbour(skip, nx, ey[:extra])
							if err != nil {
								t.Fatal(err)
							}
							obs = append(obs, nb)
						}
					}
					p := o.Dim()
					grads, ws := make([][]float64, len(obs)), make([][]float64, len(obs))
					for b := range obs {
						grads[b], ws[b] = make([]float64, p), randVec(r, p, 2)
					}
					Grads(obs, grads, ws)
					// A second pass elsewhere: nothing of the first is left.
					for b := range obs {
						ws[b] = randVec(r, p, 1)
					}
					Grads(obs, grads, ws)
					for b, ob := range obs {
						want := make([]float64, p)
						ob.Grad(want, ws[b])
						if !sameBits(grads[b], want) {
							t.Errorf("objective %d (skip %d, %d extra rows): Grads %v, Grad %v", b, ob.skip, ob.e, grads[b], want)
						}
					}
				})
			}
		}
	}
}

// TestGradsPanics checks the programmer errors of Grads: objectives on
// other rows, and counts or lengths that do not match.
func TestGradsPanics(t *testing.T) {
	l := losses.Logistic{}
	X, y := rows(20, 3, l, 0, 1)
	X2, y2 := rows(20, 3, l, 0, 2)
	o, o2 := mustNew(t, X, y, Config{Loss: l}), mustNew(t, X2, y2, Config{Loss: l})
	v := func() []float64 { return make([]float64, 3) }
	for name, f := range map[string]func(){
		"other rows": func() { Grads([]*Objective{o, o2}, [][]float64{v(), v()}, [][]float64{v(), v()}) },
		"counts":     func() { Grads([]*Objective{o}, [][]float64{v(), v()}, [][]float64{v()}) },
		"length":     func() { Grads([]*Objective{o}, [][]float64{v()}, [][]float64{{1}}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	Grads(nil, nil, nil) // nothing to do
}

// benchGrads times the gradients of b neighbours of a logistic objective
// on n rows of d features, one pass for all (Grads) or one each (Grad).
func benchGrads(bt *testing.B, n, d, b int, together bool) {
	X, y := rows(n, d, losses.Logistic{}, 0, 1)
	o := mustNew(bt, X, y, Config{Loss: losses.Logistic{}, Lambda: 1e-3})
	r := rand.New(rand.NewPCG(1, 2))
	obs, grads, ws := make([]*Objective, b), make([][]float64, b), make([][]float64, b)
	for i := range obs {
		nb, err := o.Neighbour(r.IntN(n), nil, nil)
		if err != nil {
			bt.Fatal(err)
		}
		obs[i], grads[i], ws[i] = nb, make([]float64, d), randVec(r, d, 1)
	}
	bt.ResetTimer()
	for range bt.N {
		if together {
			Grads(obs, grads, ws)
			continue
		}
		for i, ob := range obs {
			ob.Grad(grads[i], ws[i])
		}
	}
	bt.ReportMetric(float64(bt.Elapsed().Nanoseconds())/float64(bt.N*n*b), "ns/row")
}

func BenchmarkGrads80kx20x8(b *testing.B)        { benchGrads(b, 80000, 20, 8, true) }
func BenchmarkGradOneByOne80kx20x8(b *testing.B) { benchGrads(b, 80000, 20, 8, false) }
