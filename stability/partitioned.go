package stability

import (
	"errors"
	"fmt"

	"github.com/stabpriv/stabpriv/trainer"
)

// ErrPartitioned is wrapped by every error about a partitioned fit whose
// sensitivity cannot be certified.
var ErrPartitioned = errors.New("stability: partitioned sensitivity not covered")

// Partitioned is the sensitivity of a partitioned fit: the weighted average
// sum_p (n_p/n) w_p of P runs with the same settings on disjoint parts of
// the rows (package partition). Replacing one row changes one part p, so
// the average moves by at most (n_p/n) Delta_p, and over all parts by at
// most Delta = max_p (n_p/n) Delta_p, each Delta_p by the route of part p's
// own run (docs/DESIGN.md, section 7). Neighbours are replace-one, both
// fits sharing the seeds and the partition of every row position.
type Partitioned struct {
	// Delta is max_p (n_p/n) Delta_p, attained at part Worst.
	Delta float64
	Worst int
	// Routed is false when some part's run has no route: then nothing may
	// be released.
	Routed bool
	// N is the number of rows of all parts.
	N int
}

// AnalyzePartitioned analyzes the runs of the parts of a partitioned fit
// from ref, the record of the settings on all n rows, the part sizes (n_p,
// summing to ref.N; empty parts are skipped) and each part's trainer seed:
// part p's record is ref.OnRows(n_p, seed(p)).
func AnalyzePartitioned(ref trainer.Run, sizes []int, seed func(p int) uint64) (Partitioned, error) {
	n := 0
	for _, np := range sizes {
		if np < 0 {
			return Partitioned{}, fmt.Errorf("%w: part sizes %v", ErrPartitioned, sizes)
		}
		n += np
	}
	if len(sizes) < 1 || n != ref.N {
		return Partitioned{}, fmt.Errorf("%w: %d parts with sizes %v for n = %d", ErrPartitioned, len(sizes), sizes, ref.N)
	}
	t := Partitioned{Worst: -1, Routed: true, N: n}
	for p, np := range sizes {
		if np == 0 {
			continue
		}
		run, err := ref.OnRows(np, seed(p))
		if err != nil {
			return Partitioned{}, fmt.Errorf("%w: %w", ErrPartitioned, err)
		}
		rep, err := Analyze(&run)
		if err != nil {
			return Partitioned{}, err
		}
		if rep.Chosen == 0 {
			t.Routed = false
			continue
		}
		if d := float64(np) / float64(n) * rep.Delta; d > t.Delta || t.Worst < 0 {
			t.Delta, t.Worst = d, p
		}
	}
	return t, nil
}

// Check returns an error wrapping ErrPartitioned unless every part's run
// has a route and the partitioned sensitivity is at most the sensitivity
// of ref, the analysis of the settings on all rows (which a model file
// publishes and its noise is calibrated to), up to the rounding allowance
// RoundingSlack.
func (t Partitioned) Check(ref *Report) error {
	switch {
	case !t.Routed:
		return fmt.Errorf("%w: no sensitivity route applies to the run of every partition, nothing may be released", ErrPartitioned)
	case ref == nil || ref.Chosen == 0:
		return fmt.Errorf("%w: no sensitivity route applies to the settings on all %d rows, which the certificate publishes", ErrPartitioned, t.N)
	case t.Delta > ref.Delta*(1+RoundingSlack):
		return fmt.Errorf("%w: the partitioned sensitivity max_p (n_p/n) Delta_p = %.6g (partition %d) exceeds the %v route's %.6g for the settings on all %d rows, which a model file can state; "+
			"with batch 1 and the bounded inverse-t schedule (the default of a release) they agree, else choose a batch size that divides every partition's size",
			ErrPartitioned, t.Delta, t.Worst, ref.Chosen, ref.Delta, t.N)
	}
	return nil
}
