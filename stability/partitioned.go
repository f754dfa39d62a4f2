package stability

import (
	"errors"
	"fmt"

	"github.com/stabpriv/stabpriv/trainer"
)

// ErrPartitioned is wrapped by every error about a partitioned fit whose
// sensitivity cannot be certified.
var ErrPartitioned = errors.New("stability: partitioned sensitivity not covered")

// PartitionedCitation names the argument of AnalyzePartitioned for units
// of one row.
const PartitionedCitation = "disjoint partitions: a unit's rows lie in one partition, so the weighted average moves by (n_p/n) times that partition's change " +
	"(docs/DESIGN.md, section 7)"

// GroupCitation names the step of AnalyzePartitioned from one changed row
// to the c rows of a unit, for c > 1.
const GroupCitation = "c changed rows by the triangle inequality along c replace-one steps (group stability, as group privacy in Dwork & Roth 2014, Theorem 2.2)"

// Citation names the argument of the bound t: PartitionedCitation, and
// GroupCitation only when a unit has Group > 1 rows (a fit per privacy ID
// with c > 1; with c = 1, or without a privacy ID, a unit is one row and
// the group step is not taken).
func (t Partitioned) Citation() string {
	if t.Group > 1 {
		return PartitionedCitation + "; " + GroupCitation
	}
	return PartitionedCitation
}

// Partitioned is the sensitivity of a partitioned fit: the weighted average
// sum_p (n_p/n) w_p of P runs with the same settings on disjoint parts of
// the rows (package partition), each part's run by its own route.
type Partitioned struct {
	// Delta is Group * max_p (n_p/n) Delta_p, attained at part Worst,
	// whose run chose the route Route.
	Delta float64
	Worst int
	Route RouteID
	// Group is the number of rows of one unit of privacy (1: a row; c:
	// the rows kept for one privacy ID, all in one part).
	Group int
	// Routed is false when some part's run has no route: then nothing may
	// be released.
	Routed bool
	// N is the number of rows of all parts.
	N int
}

// Formula states the bound with its constants.
func (t Partitioned) Formula() string {
	if t.Group == 1 {
		return fmt.Sprintf("max_p (n_p/n) Delta_p over the %d rows, each Delta_p by its part's route; the largest at part %d (%v)", t.N, t.Worst, t.Route)
	}
	return fmt.Sprintf("c max_p (n_p/n) Delta_p with c = %d rows per unit, over the %d rows, each Delta_p by its part's route; the largest at part %d (%v)", t.Group, t.N, t.Worst, t.Route)
}

// RouteName names the partitioned route in certificates:
// "partitioned/<route of the worst part>".
func (t Partitioned) RouteName() string { return "partitioned/" + t.Route.String() }

// AnalyzePartitioned analyzes the runs of the parts of a partitioned fit
// from ref, the record of the settings on all n rows, the part sizes (n_p,
// summing to ref.N; empty parts are skipped), the number group >= 1 of rows
// of one unit of privacy, and each part's trainer seed: part p's record is
// ref.OnRows(n_p, seed(p)). It returns
//
//	Delta = group * max_p (n_p/n) Delta_p,
//
// each Delta_p the L2 sensitivity of part p's run by its chosen route
// (Analyze), on every route: the strongly convex ones, where
// (n_p/n) Delta_p <= 2L/(mu n), and the convex and constant-step ones,
// where Delta_p does not shrink with n_p and Delta is about 1/P of the
// single run's.
//
// Neighbours: the two fits share the settings, the seeds, the number of
// rows of every part and the part and position of every row (positions are
// public: package partition), and differ in the rows of one unit, at most
// group rows, all in one part p*. Proof. The other parts' rows and seeds
// are equal, and training is a deterministic function of them, so
// w_p = w'_p for p != p*, and
//
//	||wbar - wbar'|| = (n_p*/n) ||w_p* - w'_p*||.
//
// For group = 1 the rows of p* are replace-one neighbours of size n_p* in
// the same order, and ||w_p* - w'_p*|| <= Delta_p*, the route's bound for
// part p*'s run (every route bounds replace-one neighbours with a shared
// seed, wherever the differing row sits). For k <= group changed rows,
// replace them one at a time: S = S_0, S_1, ..., S_k = S', each S_i of
// size n_p* with the same positions, consecutive ones replace-one
// neighbours; by the triangle inequality ||w(S) - w(S')|| <=
// sum_i ||w(S_{i-1}) - w(S_i)|| <= k Delta_p* (group stability: the
// argument of group privacy, Dwork & Roth 2014, "The Algorithmic
// Foundations of Differential Privacy", Theorem 2.2, for sensitivities).
// Hence ||wbar - wbar'|| <= group (n_p*/n) Delta_p* <= Delta.
// docs/DESIGN.md, section 7, states the proof.
func AnalyzePartitioned(ref trainer.Run, sizes []int, group int, seed func(p int) uint64) (Partitioned, error) {
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
	if group < 1 {
		return Partitioned{}, fmt.Errorf("%w: %d rows per unit, want >= 1", ErrPartitioned, group)
	}
	t := Partitioned{Worst: -1, Routed: true, N: n, Group: group}
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
		if d := float64(group) * float64(np) / float64(n) * rep.Delta; d > t.Delta || t.Worst < 0 {
			t.Delta, t.Worst, t.Route = d, p, rep.Chosen
		}
	}
	return t, nil
}

// Check returns an error wrapping ErrPartitioned unless every part's run
// has a route (so Delta bounds the average's sensitivity).
func (t Partitioned) Check() error {
	if !t.Routed || t.Worst < 0 {
		return fmt.Errorf("%w: no sensitivity route applies to the run of every partition, nothing may be released", ErrPartitioned)
	}
	return nil
}
