package modelfile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/selection"
	"github.com/stabpriv/stabpriv/stability"
	"github.com/stabpriv/stabpriv/trainer"
)

// Released is a model file: the released model with everything needed
// to apply and to verify it. Every field but Diagnostics is public or
// privatized (or, for Standardize, named in the certificate as not
// covered) and is written into the model file.
type Released struct {
	// Private reports a private release of the table: a mechanism, the
	// secure source, and a preprocessing inside the guarantee.
	Private bool `json:"private"`
	// Model holds the released weights (the trained weights when the fit
	// is not private).
	Model *trainer.Model `json:"model"`
	// Certificate states the claim; nil for a fit without a mechanism.
	Certificate *release.Certificate `json:"certificate,omitempty"`
	// Schema is the declared schema (the classes used, and the label).
	Schema datasets.Schema `json:"schema"`
	// Preprocessing maps raw rows to model inputs.
	Preprocessing *preprocess.RowMap `json:"preprocessing"`
	// Run holds the constants of a non-private run (a release publishes
	// them in its certificate); nil for a release.
	Run *trainer.Run `json:"run,omitempty"`
	// Stability is the analysis of the run, from its constants alone.
	Stability *stability.Report `json:"stability,omitempty"`
	// Split records how rows were split.
	Split SplitInfo `json:"split"`
	// AutoKnobs reports that the knobs were chosen by the release method's
	// Auto from public values alone (private.Options.Auto): Verify then
	// recomputes them from (n, dim, K, mechanism, budget).
	AutoKnobs bool `json:"auto_knobs,omitempty"`
	// Selection describes the private selection that chose the setting
	// (private.Options.Select); nil otherwise. Verify recomputes its plan
	// and the chosen setting's knobs.
	Selection *selection.Record `json:"selection,omitempty"`
	// Partitions describes a partitioned fit (package partition); nil
	// otherwise.
	Partitions *PartitionInfo `json:"partitions,omitempty"`
	// Notes says, for a fit without a certificate, how it was made.
	Notes []string `json:"notes,omitempty"`
	// Diagnostics is set with private.Options.Diagnostics: statistics of the data,
	// never written to a model file.
	Diagnostics *Diagnostics `json:"-"`
}

// SplitInfo is how a fit split the rows of the table.
type SplitInfo struct {
	TestFrac   float64 `json:"test_frac"`
	Seed       uint64  `json:"seed"`
	Stratified bool    `json:"stratified"`
	Rows       int     `json:"rows"`
	TrainRows  int     `json:"train_rows"`
}

// PartitionInfo is the public description of a partitioned fit, written
// into its model file: the number of partitions and the number of training
// rows of each (functions of the rows' positions and the seed only).
type PartitionInfo struct {
	Count int   `json:"count"`
	Sizes []int `json:"sizes"`
	// Shards are the shards' names and row counts, in name order: public
	// (neighbours share them), and all that the sizes, the held-out rows
	// and n depend on, so Verify recomputes the sizes from them. A fit per
	// privacy ID publishes none: its shards' row counts depend on how many
	// rows each ID has.
	Shards []placement.Shard `json:"shards"`
	// PrivacyID names the privacy-ID column of a fit per privacy ID, which
	// keeps MaxRowsPerID = c rows of each of its IDs privacy IDs (padded
	// with null rows): n = c * (training IDs) and each n_p is c times the
	// IDs of partition p, functions of the set of IDs and the seed
	// (placement.IDLayout). Empty, 0 and 0 when the unit of privacy is a
	// row.
	PrivacyID    string `json:"privacy_id,omitempty"`
	MaxRowsPerID int    `json:"max_rows_per_id,omitempty"`
	IDs          int    `json:"ids,omitempty"`
}

// group returns the number of rows of one unit of privacy: c for a fit
// per privacy ID, 1 (a row) otherwise or for nil info.
func (info *PartitionInfo) group() int {
	if info != nil && info.PrivacyID != "" {
		return info.MaxRowsPerID
	}
	return 1
}

// Units returns the number of units of privacy among train training rows
// and the unit's name: the rows, or for a fit per privacy ID (perID) with
// c rows per ID the train/c IDs. A delta is compared with it
// (dp.Budget.CheckRows).
func Units(train int, perID bool, c int) (int, string) {
	if perID && c > 0 {
		return train / c, "training privacy ID"
	}
	return train, "training row"
}

// Diagnostics are statistics of the data computed in the clear: for the
// user's eyes only, not covered by any privacy claim, never published.
type Diagnostics struct {
	Stats trainer.Stats
	// Trained and Released are metrics of the trained and released weights
	// on the training and test rows (rows with a declared label only).
	TrainedTrain, TrainedTest, ReleasedTrain, ReleasedTest Metric
	// MajorityTrain and MajorityTest are the accuracy of predicting the
	// most frequent class on those rows (classification): the baseline.
	MajorityTrain, MajorityTest Metric
	// NullRows counts the training rows whose label was not declared.
	NullRows int
	// Classes lists the labels seen in the table (a non-private run only).
	Classes []string
}

// Metric is a quality figure of a model on some rows: accuracy for
// classification, root mean squared error for regression.
type Metric struct {
	Name  string
	Value float64
	Rows  int
}

// TableNeighbours is the neighbouring relation of a fit's certificate.
const TableNeighbours = "replace-one on the rows of the input table: two tables with the same header and the same number of rows that differ in one row " +
	"(its features, its label or both), each well-formed (valid CSV, every feature cell a finite number); both fits use the same settings and Seed"

// PartitionNeighbours is the neighbouring relation of a partitioned
// release.
const PartitionNeighbours = "replace-one on the rows of the shards: two lists of shards with the same names, the same header and the same number of data rows in each shard, " +
	"that differ in one row (its features, its label or both), each row well-formed (every feature cell a finite number); both fits use the same Seed and number of partitions"

// IDNeighbours is the neighbouring relation of a release per privacy ID
// (PartitionInfo.PrivacyID), c its MaxRowsPerID.
const IDNeighbours = "replace-one privacy ID: two lists of shards with the same names and header and the same set of privacy IDs, " +
	"that differ in all the rows of one ID (their number, from 1 to any count, their features, their labels and their positions; the other IDs' rows the same and in the same order), each row well-formed (every feature cell a finite number); " +
	"at most c rows of each ID are kept (a seeded choice by their order among the ID's rows) and padded to exactly c with null rows; both fits use the same Seed, c and number of partitions"

// Neighbours returns the neighbouring relation of r's certificate:
// IDNeighbours for a fit per privacy ID, PartitionNeighbours for another
// partitioned fit, TableNeighbours otherwise.
//
// With a feature map that reads missing cells (preprocessing.Missing), a
// well-formed row may have them, and the relation says so (MissingCells);
// files without it keep the words they were written with.
func (r *Released) Neighbours() string {
	n := TableNeighbours
	switch {
	case r != nil && r.Partitions != nil && r.Partitions.PrivacyID != "":
		n = IDNeighbours
	case r != nil && r.Partitions != nil:
		n = PartitionNeighbours
	}
	switch {
	case r != nil && r.Preprocessing != nil && r.Preprocessing.Text:
		n = strings.Replace(n, "each well-formed (valid CSV, every feature cell a finite number)", TextCells, 1)
	case r != nil && r.Preprocessing != nil && r.Preprocessing.Missing:
		n = strings.Replace(n, "every feature cell a finite number", MissingCells, 1)
	}
	return n
}

// TextCells is what a well-formed table is under a feature map that
// reads text cells (preprocessing.Text): any cell may hold any text.
const TextCells = "each well-formed (valid CSV; any cell may be a number, missing or text)"

// MissingCells is what a well-formed row's numeric cells may be under a
// feature map that reads missing cells.
const MissingCells = "every numeric feature cell a finite number or missing: empty, or one of ? . NA N/A na n/a NaN nan null NULL None none"

// PipelineNotes returns the not-covered notes of the pipeline that made r,
// for a loss of the given task, from r's public fields: what is public
// (header, row count, schema, settings), the refusal of malformed tables,
// the split (by position, or for a partitioned fit by a hash of
// positions), the preprocessing (with a WARNING for a map outside the
// guarantee) and the null rows. r.Preprocessing and r.Split must be set:
// without a preprocessing (a zero Released, say) the notes cannot be
// written, and the error wraps ErrFile.
func (r *Released) PipelineNotes(task losses.Task) ([]string, error) {
	if r == nil || r.Preprocessing == nil {
		return nil, fmt.Errorf("%w: no preprocessing to state in the notes", ErrFile)
	}
	notes := fitNotes(r.Preprocessing, task)
	if r.Partitions == nil {
		return notes, nil
	}
	for i, s := range notes {
		switch {
		case strings.HasPrefix(s, "the split depends only on") && r.Partitions.PrivacyID != "":
			notes[i] = fmt.Sprintf("the split holds all the rows of a privacy ID out for testing when a seeded hash of the ID falls below the test fraction %g; it depends on the ID, the fraction and the seed only, and the held-out rows are not used by the release", r.Split.TestFrac)
		case strings.HasPrefix(s, "the split depends only on"):
			notes[i] = fmt.Sprintf("the split holds a row out for testing when a seeded hash of its position (shard name, data row number) falls below the test fraction %g; it depends on positions, the fraction and the seed only, and the held-out rows are not used by the release", r.Split.TestFrac)
		case strings.HasPrefix(s, "public, and so not protected") && r.Partitions.PrivacyID != "":
			notes[i] = strings.Replace(s, "the number of rows,", "the set of privacy IDs (which IDs are present, hence their number and each partition's size: the analogue of n under replace-one; the guarantee protects the rows of one ID, not whether the ID is present),", 1)
		}
	}
	return notes, nil
}

// fitNotes are the not-covered notes of a fit's certificate.
func fitNotes(p *preprocess.RowMap, task losses.Task) []string {
	notes := []string{
		"public, and so not protected: the header (column names), the number of rows, the declared schema (label, classes, bounds) and every setting of the run; the classes and bounds must be declared without looking at the rows (bounds computed from the rows, say their minimum and maximum, are statistics of the data and void the claim)",
		"a table that is not well-formed (a CSV syntax error, a ragged row, a feature cell that is not a finite number) is refused before training: the claim is about well-formed tables",
		"the split depends only on the number of rows, the test fraction and the seed; the held-out rows are not used by the release",
		"preprocessing: " + p.Words,
	}
	switch task {
	case losses.Regression:
		notes = append(notes, "a row whose label is not a finite number is a null row (features and bias 0); labels are clamped to the declared label bound")
	default:
		notes = append(notes, "a row whose label is not one of the declared classes is a null row (features and bias 0, zero gradient); the number of such rows is not published")
	}
	if p.Missing {
		notes[1] = "a table that is not well-formed (a CSV syntax error, a ragged row, a numeric feature cell that is neither a finite number nor missing) is refused before training: the claim is about well-formed tables"
		notes = append(notes, "a missing numeric cell (empty, or one of ? . NA N/A na n/a NaN nan null NULL None none) maps to z_j = 0, the middle of its feature's map: a per-row map inside the guarantee; how many cells are missing is not published")
	}
	if p.Text {
		notes[1] = "a table that is not well-formed (a CSV syntax error, a ragged row) is refused before training: the claim is about well-formed tables"
		types := "no column's type was decided (the feature map's constants are public): every feature column is numeric, and a cell that is not a number reads as missing"
		switch {
		case p.Estimated && p.Log > 0:
			types = "each feature column's type was decided inside the guarantee (text if its text cells outnumber its numbers, chosen privately with the centres; a text column is hashed): a cell of a numeric column that is not a number reads as missing"
		case !p.Mode.Inside() || p.Mode == preprocess.None:
			types = "each feature column's type was decided by counting (text if its text cells outnumber its numbers; a text column is hashed): a cell of a numeric column that is not a number reads as missing"
		}
		notes = append(notes, types+"; how many cells are text is not published")
	}
	var declared, hashed bool
	for _, c := range p.Categories {
		declared, hashed = declared || c.Hash == 0, hashed || c.Hash > 0
	}
	if declared {
		notes = append(notes, "categorical columns are one-hot encoded with their declared categories (public, like the bounds): a per-row map inside the guarantee; a value that is not a declared category (matched by its exact text) maps to a block of zeros, and how many rows have one is not published")
	}
	if hashed {
		notes = append(notes, "text columns are one-hot encoded by hashing: a cell's text chooses one of a public number of buckets by a public hash (collisions merge categories), a per-row map inside the guarantee that reads no category from the rows; a missing cell maps to a block of zeros")
	}
	if !p.Mode.Inside() {
		notes = append(notes, "WARNING: not covered: the standardization means and scales are fitted on the training split, written beside the weights and not private; "+
			"one row changes every standardized row, so the claim holds for the standardized rows only, not for the table (use declared bounds, or the preprocessing none, to be covered)")
	}
	return notes
}

// PartitionCharge is the ledger entry of a partitioned release.
func PartitionCharge(m dp.Mechanism, b dp.Budget) dp.Charge {
	return dp.Charge{Step: "release of the averaged weights of the partitions (output perturbation, once)", Mechanism: m, Epsilon: b.Epsilon, Delta: b.Delta}
}

// AccountPartition writes the ledger of a partitioned release into its
// certificate c: the one charge PartitionCharge(m, b), taken from a ledger
// of c's claim. An error means it does not fit in the claim.
func AccountPartition(c *release.Certificate, m dp.Mechanism, b dp.Budget) error {
	l, err := dp.NewLedger(dp.Budget{Epsilon: c.Epsilon, Delta: c.Delta}, PartitionCharge(m, b))
	if err != nil {
		return err
	}
	c.Account(l)
	return nil
}

// PublicSchema returns the schema as a model file holds it: the label, the
// classes and the label bound (the bounds and the categories are in the
// preprocessing, in feature order).
func PublicSchema(s datasets.Schema) datasets.Schema {
	s.Classes = slices.Clone(s.Classes)
	s.Bounds, s.All, s.Categories = nil, nil, nil // in the preprocessing
	return s
}

// PartitionNotes are the notes a partitioned release adds to its
// certificate: how rows were assigned and trained, and that the
// partitions' weights are not private. info must be set, and part and info
// must describe one fit (as many sizes as partitions, and part.N their
// sum): otherwise the notes would state another fit, and the error wraps
// ErrFile.
func PartitionNotes(part stability.Partitioned, info *PartitionInfo, seed uint64) ([]string, error) {
	if info == nil {
		return nil, fmt.Errorf("%w: partition notes without the partitions", ErrFile)
	}
	if n := sum(info.Sizes); len(info.Sizes) != info.Count || info.Count < 1 || n != part.N {
		return nil, fmt.Errorf("%w: partition notes of %d partitions with %d sizes summing to %d, for n = %d", ErrFile, info.Count, len(info.Sizes), n, part.N)
	}
	partNote := fmt.Sprintf("partitioned training: %d partitions; a row's partition is a seeded hash (seed %d) of its position (its shard's path relative to the input root, data row number), never of its content, so the partition sizes are public: n = %d, n_p = %v. "+
		"Each partition was trained with the run constants below on its n_p rows in position order (ceil(n_p/b) steps per pass, trainer seed = seed + p * 0x9e3779b97f4a7c15 mod 2^64), "+
		"and the released weights are sum_p (n_p/n) w_p plus the noise, added once",
		info.Count, seed, part.N, info.Sizes)
	if info.PrivacyID != "" {
		if info.MaxRowsPerID < 1 || info.IDs < 1 || part.Group != info.MaxRowsPerID {
			return nil, fmt.Errorf("%w: partition notes of %d privacy IDs with c = %d, for a bound with %d rows per unit", ErrFile, info.IDs, info.MaxRowsPerID, part.Group)
		}
		partNote = fmt.Sprintf("training per privacy ID (column %q, not a feature): of the rows of each ID, at most c = %d are kept, a seeded choice (seed %d) by their order among the ID's rows (placement.BoundContributions), and the ID is padded to exactly c rows with null rows (zero input, zero gradient), so each of the %d IDs contributes c rows; "+
			"the ID's partition, and whether it is held out, are seeded hashes of the ID alone, so all its rows lie in one partition and the sizes are public: n = %d, n_p = %v. "+
			"Each partition was trained with the run constants below on its n_p rows ordered by ID and slot (ceil(n_p/b) steps per pass, trainer seed = seed + p * 0x9e3779b97f4a7c15 mod 2^64), "+
			"and the released weights are sum_p (n_p/n) w_p plus the noise, added once; the sensitivity is c times the bound for one row of the worst partition (group stability)",
			info.PrivacyID, info.MaxRowsPerID, seed, info.IDs, part.N, info.Sizes)
	}
	refNote := fmt.Sprintf("the run record below is the reference run: the same settings on all n = %d rows; each partition's run is it recomputed for n_p rows and the partition's seed (trainer.Run.OnRows)", part.N)
	return []string{partNote, refNote, "the weights of each partition are not private: they exist only inside the training job, whose workers are trusted with the rows"}, nil
}

// sum returns the sum of xs.
func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// PartitionSensitivity returns the sensitivity a partitioned release is
// calibrated to, Delta = c max_p (n_p/n) Delta_p
// (stability.AnalyzePartitioned), and its notes: the reference run's
// assumptions and the bound with its citation. The neighbouring relation
// is replace-one on the rows (c = 1) or on the rows of one privacy ID.
func PartitionSensitivity(part stability.Partitioned, ref *stability.Report) (perturb.Sensitivity, []string, error) {
	if err := part.Check(); err != nil {
		return perturb.Sensitivity{}, nil, err
	}
	neighbours := perturb.ReplaceOne + " row in one partition, the partitions' sizes and every row's position and partition shared"
	if part.Group > 1 {
		neighbours = perturb.ReplaceOne + " privacy ID: the rows of one ID (at most c, in one partition) replaced, the partitions' sizes and every row's position and partition shared"
	}
	sens := perturb.Sensitivity{L2: part.Delta, Beta: ref.Effective.LossL * part.Delta, Route: part.RouteName(), Neighbouring: neighbours}
	if err := sens.Validate(); err != nil {
		return perturb.Sensitivity{}, nil, err
	}
	notes := append([]string(nil), ref.Assumptions...)
	notes = append(notes, fmt.Sprintf("sensitivity route %s: Delta = %s = %.17g (%s)", part.RouteName(), part.Formula(), part.Delta, part.Citation()))
	return sens, notes, nil
}
