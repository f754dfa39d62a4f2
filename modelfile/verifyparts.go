package modelfile

import (
	"fmt"
	"math"
	"slices"

	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/selection"
	"github.com/stabpriv/stabpriv/stability"
)

// partitioned is the analysis of a partitioned fit: the partitioned
// sensitivity and the analysis of the reference run.
type partitioned struct {
	stability.Partitioned
	ref   *stability.Report
	sens  perturb.Sensitivity
	notes []string
}

// MaxVerifyRows bounds the rows of a partitioned fit that Verify lays out
// again: it hashes every row position (about 100 ns each), so a file that
// claims more rows is refused rather than verified for minutes.
const MaxVerifyRows = 1 << 31

// checkPartitions checks a partitioned fit: the partition sizes, held-out
// rows and n recomputed from the published shard names and row counts,
// and the partitioned sensitivity, which the reference run's route must
// cover.
func checkPartitions(r *Released, bad func(format string, args ...any)) *partitioned {
	info := r.Partitions
	if info.PrivacyID != "" {
		if !checkIDLayout(r, bad) {
			return nil
		}
		return analyzePartitions(r, bad)
	}
	if info.MaxRowsPerID != 0 || info.IDs != 0 {
		bad("partitions: %d rows per privacy ID and %d IDs without a privacy-ID column", info.MaxRowsPerID, info.IDs)
		return nil
	}
	total := 0
	for _, sh := range info.Shards {
		if sh.Rows < 1 || sh.Rows > MaxVerifyRows-total {
			bad("partitions: shard %q with %d rows: want 1 or more, and at most %d rows in all (the rows a verification lays out)", sh.Name, sh.Rows, MaxVerifyRows)
			return nil
		}
		total += sh.Rows
	}
	if total != r.Split.Rows {
		bad("the shards %v hold %d rows; the file says %d", info.Shards, total, r.Split.Rows)
		return nil
	}
	rows, train, sizes, err := placement.PartitionLayout(info.Shards, r.Split.Seed, r.Split.TestFrac, info.Count)
	switch {
	case err != nil:
		bad("partitions: %v", err)
		return nil
	case rows != r.Split.Rows || train != r.Split.TrainRows || !slices.Equal(sizes, info.Sizes):
		bad("the shards %v give %d rows, %d for training, partition sizes %v; the file says %d, %d, %v", info.Shards, rows, train, sizes, r.Split.Rows, r.Split.TrainRows, info.Sizes)
		return nil
	case train < info.Count:
		bad("%d partitions for %d training rows", info.Count, train)
		return nil
	}
	return analyzePartitions(r, bad)
}

// checkIDLayout checks the layout of a fit per privacy ID: no shards (their
// row counts are not public), c >= 1 rows per ID and at least one ID,
// c * IDs rows, and Count sizes, each a multiple of c, summing to the
// training rows, at least Count of them and at most the rows. Which ID
// lies in which partition is not published, so the sizes are taken as
// published: they are public under the relation (IDNeighbours), and the
// sensitivity is recomputed from them.
func checkIDLayout(r *Released, bad func(format string, args ...any)) bool {
	info := r.Partitions
	c := info.MaxRowsPerID
	switch {
	case info.Shards != nil:
		bad("partitions: a fit per privacy ID publishes no shard row counts (they depend on the rows of each ID)")
	case c < 1 || info.IDs < 1 || info.IDs > MaxVerifyRows/c:
		bad("partitions: %d privacy IDs with c = %d rows each: want c >= 1 and 1 to %d rows", info.IDs, c, MaxVerifyRows)
	case r.Split.Rows != c*info.IDs:
		bad("partitions: %d privacy IDs of %d rows give %d rows; the file says %d", info.IDs, c, c*info.IDs, r.Split.Rows)
	case len(info.Sizes) != info.Count || info.Count < 1 || info.Count > placement.MaxPartitions:
		bad("partitions: %d sizes for %d partitions", len(info.Sizes), info.Count)
	default:
		total := 0
		for p, np := range info.Sizes {
			if np < 0 || np%c != 0 || np > r.Split.Rows {
				bad("partitions: partition %d has %d rows, not a multiple of c = %d in [0, %d]", p, np, c, r.Split.Rows)
				return false
			}
			total += np
		}
		if total != r.Split.TrainRows || total > r.Split.Rows || total < info.Count {
			bad("partitions: sizes %v sum to %d; the file says %d training rows of %d, for %d partitions", info.Sizes, total, r.Split.TrainRows, r.Split.Rows, info.Count)
			return false
		}
		return true
	}
	return false
}

// analyzePartitions recomputes the partitioned sensitivity of r from its
// run record and its partition sizes, with the unit of privacy of r.
func analyzePartitions(r *Released, bad func(format string, args ...any)) *partitioned {
	info := r.Partitions
	run := *r.Certificate.Run
	part, err := stability.AnalyzePartitioned(run, info.Sizes, info.group(), func(p int) uint64 { return placement.PartitionSeed(r.Split.Seed, p) })
	if err != nil {
		bad("partitions: %v", err)
		return nil
	}
	ref, err := stability.Analyze(&run)
	if err != nil {
		bad("partitions: %v", err)
		return nil
	}
	sens, notes, err := PartitionSensitivity(part, ref)
	if err != nil {
		bad("partitions: %v", err)
		return nil
	}
	return &partitioned{part, ref, sens, notes}
}

// runRows returns the number of rows the released run trained on: the
// split's training rows, or the release rows of a selection (which
// checkSelection recomputes from the split).
func runRows(r *Released) int {
	if r.Selection != nil {
		return r.Selection.ReleaseRows
	}
	return r.Split.TrainRows
}

// selected is the checked selection of a file: the chosen setting and the
// budget of the released run.
type selected struct {
	rec     *selection.Record
	setting selection.Setting
	budget  dp.Budget
}

// checkSelection recomputes the plan of a file's selection from the split,
// the model's shape and the budget (selection.Record.Check), and checks
// that the release is the chosen setting's.
func checkSelection(r *Released, bad func(format string, args ...any)) *selected {
	c := r.Certificate
	if r.Partitions != nil || !r.AutoKnobs {
		bad("a selection with partitions (%v) or without the automatic knobs (%v)", r.Partitions != nil, r.AutoKnobs)
		return nil
	}
	loss, err := losses.ByName(r.Model.Loss)
	if err != nil {
		bad("%v", err)
		return nil
	}
	s, b, _, err := r.Selection.Check(r.Split.TrainRows, loss, len(r.Schema.Classes), r.Model.D, r.ReleaseBudget(), r.Split.Seed)
	if err != nil {
		bad("%v", err)
		return nil
	}
	if c.Mechanism != s.Mechanism {
		bad("the release's mechanism is %s, the chosen setting's %s", c.Mechanism, s.Mechanism)
		return nil
	}
	return &selected{rec: r.Selection, setting: s, budget: b}
}

// runCertificate returns the certificate of the released run: c itself,
// or for a random-stopping selection a copy at the run's budget (its
// noise was calibrated to it).
func (s *selected) runCertificate(c *release.Certificate) *release.Certificate {
	if s == nil || s.rec.Method != selection.RandomStopping {
		return c
	}
	cp := *c
	cp.Epsilon, cp.Delta = s.budget.Epsilon, s.budget.Delta
	return &cp
}

// trainRows returns the number of training rows of a split.
func trainRows(s SplitInfo) (int, error) {
	if s.Rows < 1 || !check.HalfOpenUnit(s.TestFrac) {
		return 0, fmt.Errorf("%d rows, test fraction %v", s.Rows, s.TestFrac)
	}
	return s.Rows - int(math.Round(s.TestFrac*float64(s.Rows))), nil
}
