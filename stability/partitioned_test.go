package stability

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/trainer"
)

// partSeed is the trainer seed of part p in these tests.
func partSeed(p int) uint64 { return 100 + uint64(p) }

// partitionedFit trains one run per part (rows [starts[p], starts[p+1]) of
// X) with cfg and part p's seed, and returns each part's model and the
// reference record (part 0's settings on all rows).
func partitionedFit(t *testing.T, cfg trainer.Config, X *mat.Dense, y []float64, starts []int) ([]*trainer.Model, trainer.Run) {
	t.Helper()
	n, _ := X.Dims()
	var models []*trainer.Model
	var ref trainer.Run
	for p := range len(starts) - 1 {
		lo, hi := starts[p], starts[p+1]
		c := cfg
		c.Seed = partSeed(p)
		tr, err := trainer.New(c)
		if err != nil {
			t.Fatal(err)
		}
		m, run, err := tr.Train(context.Background(), X.Slice(lo, hi, 0, X.RawMatrix().Cols), y[lo:hi])
		if err != nil {
			t.Fatal(err)
		}
		if p == 0 {
			if ref, err = run.OnRows(n, partSeed(0)); err != nil {
				t.Fatal(err)
			}
		}
		models = append(models, m)
	}
	return models, ref
}

// TestPartitionedNeighbours trains the parts of a partitioned fit on a
// data set and on neighbours that replace one row, or c rows of one part
// (a privacy ID's rows), by adversarial rows (flipped labels, -x, max-norm
// points along the weights, copies of the highest-loss row, zero rows,
// random points), on each route a partitioned fit reaches: convex SGD
// (route 3, constant step), strongly convex SGD with a constant step and a
// batch that does not divide the parts (route 4), and strongly convex SGD
// with bounded inverse-t steps (route 4, a release's default). The
// realized distance of the weighted averages never exceeds
// AnalyzePartitioned's Delta. Per row, Delta is at most 0.4 of the single
// run's on all rows on the convex route (P = 4; the parts' Delta_p do not
// shrink with n_p) and 0.6 of it on the short constant-step strongly
// convex run, which the noise used to be calibrated to, and at most the
// single run's with bounded inverse-t steps.
func TestPartitionedNeighbours(t *testing.T) {
	logistic := losses.Logistic{}
	for _, sc := range []struct {
		name  string
		cfg   trainer.Config
		route RouteID
		share float64 // Delta (per row) at most this share of the single run's
	}{
		{"convex, constant step", trainer.Config{Loss: logistic, Eta: 1, Passes: 2}, RouteConvexSGD, 0.4},
		{"strongly convex, constant step, batch 3", trainer.Config{Loss: logistic, Reg: regularizers.L2(0.05), Eta: 0.5, Batch: 3, Passes: 3}, RouteStronglyConvexSGD, 0.6},
		{"strongly convex, bounded inverse-t", trainer.Config{Loss: logistic, Reg: regularizers.L2(0.05), Schedule: trainer.BoundedInverseT, Passes: 3}, RouteStronglyConvexSGD, 1 + 1e-9},
	} {
		X, y := dataset(uint64(len(sc.name)), 130, 4, 0, logistic, 1)
		starts := []int{0, 25, 55, 95, 130} // parts of 25, 30, 40, 35 rows
		sizes := []int{25, 30, 40, 35}
		models, ref := partitionedFit(t, sc.cfg, X, y, starts)
		single, err := Analyze(&ref)
		if err != nil {
			t.Fatal(err)
		}
		for _, group := range []int{1, 3} {
			part, err := AnalyzePartitioned(ref, sizes, group, partSeed)
			if err != nil || part.Check() != nil || part.Route != sc.route || part.Group != group {
				t.Fatalf("%s: %+v %v", sc.name, part, err)
			}
			if part.Delta/float64(group) > sc.share*single.Delta {
				t.Errorf("%s: Delta_part %.6g per row, the single run's %.6g: above %g of it", sc.name, part.Delta/float64(group), single.Delta, sc.share)
			}
			worst := 0.0
			for p := range sizes {
				lo, hi := starts[p], starts[p+1]
				Xp, yp := mat.DenseCopyOf(X.Slice(lo, hi, 0, 4)), y[lo:hi]
				nbs := neighbours(uint64(p+group), Xp, yp, models[p], logistic, 0, 1)
				// A unit of group rows: neighbours of one kind at group
				// distinct rows of the part, replaced together.
				byKind := map[string][]neighbour{}
				for _, nb := range nbs {
					seen := false
					for _, o := range byKind[nb.kind] {
						seen = seen || o.i == nb.i
					}
					if !seen {
						byKind[nb.kind] = append(byKind[nb.kind], nb)
					}
				}
				for kind, list := range byKind {
					for start := 0; start+group <= len(list); start += group {
						X2, y2 := Xp, yp
						for _, nb := range list[start : start+group] {
							X2, y2 = replaced(X2, y2, nb)
						}
						c := sc.cfg
						c.Seed = partSeed(p)
						tr, err := trainer.New(c)
						if err != nil {
							t.Fatal(err)
						}
						m2, _, err := tr.Train(context.Background(), X2, y2)
						if err != nil {
							t.Fatal(err)
						}
						d := float64(hi-lo) / 130 * dist(models[p].W, m2.W)
						worst = math.Max(worst, d/part.Delta)
						if d > part.Delta {
							t.Errorf("%s, %d rows of part %d (%s): ||wbar - wbar'|| = %.17g > Delta = %.17g", sc.name, group, p, kind, d, part.Delta)
						}
					}
				}
			}
			if worst == 0 {
				t.Errorf("%s: no neighbour moved the average", sc.name)
			}
			t.Logf("%s, %d rows per unit: largest realized/certified %.4f (Delta %.4g, the single run's %.4g)", sc.name, group, worst, part.Delta, single.Delta)
		}
	}
}

// TestAnalyzePartitionedErrors checks the refusals: sizes that do not sum
// to n, a negative size, a group below 1, and a part without a route.
func TestAnalyzePartitionedErrors(t *testing.T) {
	ref := *fillSteps(handRun())
	ref.N = 100
	if _, err := AnalyzePartitioned(ref, []int{50, 40}, 1, partSeed); !errors.Is(err, ErrPartitioned) {
		t.Errorf("sizes not summing to n: %v", err)
	}
	if _, err := AnalyzePartitioned(ref, []int{110, -10}, 1, partSeed); !errors.Is(err, ErrPartitioned) {
		t.Errorf("a negative size: %v", err)
	}
	if _, err := AnalyzePartitioned(ref, []int{50, 50}, 0, partSeed); !errors.Is(err, ErrPartitioned) {
		t.Errorf("group 0: %v", err)
	}
	if err := (Partitioned{Worst: -1, Routed: true}).Check(); !errors.Is(err, ErrPartitioned) {
		t.Errorf("no part analyzed: %v", err)
	}
}

// TestPartitionedCitation: the group step is cited only for units of more
// than one row.
func TestPartitionedCitation(t *testing.T) {
	for _, g := range []int{1, 2, 5} {
		got := Partitioned{Group: g}.Citation()
		if !strings.HasPrefix(got, PartitionedCitation) || strings.Contains(got, GroupCitation) != (g > 1) {
			t.Errorf("group %d: citation %q", g, got)
		}
	}
}
