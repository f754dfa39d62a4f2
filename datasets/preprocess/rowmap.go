package preprocess

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/internal/hugepage"
)

// Mode selects how raw feature values become model inputs (RowMap).
type Mode string

const (
	// Bounds clamps every feature to its declared bound [lo, hi] and maps
	// it affinely onto [-1, 1]: z = (2 clamp(x) - lo - hi) / (hi - lo). A
	// per-row map with public constants: inside the guarantee.
	Bounds Mode = "bounds"
	// None uses the features as they are, for data already on a common,
	// public scale: inside the guarantee.
	None Mode = "none"
	// Standardize maps z = (x - mean) / scale with the means and scales
	// fitted on the training split. The statistics move every row when one
	// row changes: outside the guarantee, which the certificate states.
	Standardize Mode = "standardize"
)

// Inside reports whether the map is a per-row map with public constants,
// inside the guarantee of a release (Bounds and None).
func (m Mode) Inside() bool { return m == Bounds || m == None }

// Validate returns an error wrapping datasets.ErrInvalid for a mode other
// than Bounds, None and Standardize.
func (m Mode) Validate() error {
	switch m {
	case Bounds, None, Standardize:
		return nil
	}
	return fmt.Errorf("%w: preprocessing %q, want bounds, none or standardize", datasets.ErrInvalid, string(m))
}

// MarshalText returns the mode's name.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m), nil }

// UnmarshalText sets the mode named by text, refusing an unknown name.
func (m *Mode) UnmarshalText(text []byte) error {
	v := Mode(text)
	if err := v.Validate(); err != nil {
		return err
	}
	*m = v
	return nil
}

// RowMap is the public map from a raw row (the feature columns in
// Features order) to a model input, written into the model file:
//
//	z  = the mode's per-feature map (Bounds, None, Standardize)
//	x' = [clip_1(z), 1] / sqrt(2)
//
// clip_1 scales a row of norm above 1 to norm 1, so ||x'|| <= 1 and the
// row bound kappa = 1 holds with the constant bias feature counted in it
// (docs/DESIGN.md, section 2). A null row (a label outside the declared classes) maps to
// the zero vector, bias included: its loss gradient is zero at every w.
type RowMap struct {
	Mode Mode `json:"mode"`
	// Features names the raw feature columns, in model-input order; the
	// model's last input is the bias.
	Features []string `json:"features"`
	// Lo and Hi are the bounds (Bounds mode): declared, or estimated
	// privately when Estimated.
	Lo []float64 `json:"lo,omitempty"`
	Hi []float64 `json:"hi,omitempty"`
	// Estimated reports bounds estimated privately from the training rows
	// (package privbounds; the certificate's ledger states their cost)
	// rather than declared.
	Estimated bool `json:"estimated,omitempty"`
	// Log, when positive, is the half-width W of the log scale of the
	// Bounds map: with m_j = (lo_j + hi_j)/2 and s_j = (hi_j - lo_j)/2 a
	// centre and a spread, z_j = clamp(g((x_j - m_j)/s_j)/W, -1, 1) with
	// g = SignedLog2, in place of the linear clamp to [lo_j, hi_j]. A
	// monotone per-row map with public constants that standardizes a column
	// whatever its offset, scale and sign, and squashes its tails
	// logarithmically instead of clamping them. The constants are the
	// privately estimated centres and spreads (Estimated; package
	// privbounds, EstimateCentres) or the public ones (privbounds.
	// PublicRange). Zero means the linear map; it needs Bounds mode.
	Log float64 `json:"log,omitempty"`
	// Mean and Scale are the fitted statistics (Standardize mode): not
	// private.
	Mean  []float64 `json:"mean,omitempty"`
	Scale []float64 `json:"scale,omitempty"`
	// Categories declares the categorical columns among Features, in
	// Features order, with their categories: each is one-hot encoded into
	// len(Values) model inputs (a value that is not a declared category
	// gives a block of zeros). Lo, Hi, Mean and Scale then hold the
	// numeric features only, in order. Nil when every feature is numeric.
	Categories []datasets.Categorical `json:"categories,omitempty"`
	// Project, when not nil, maps z to R z before the unit-ball map, with R
	// a public random matrix that depends on its seed alone (Projection).
	Project *Projection `json:"project,omitempty"`
	// PCA, when not nil, maps the row before the unit-ball map (z, or R z
	// after Project) to its coordinates u = V clip_1(z) on private
	// principal directions (Components): a per-row map whose constants
	// were released by a private step of the fit (package dppca; the
	// certificate's ledger states its cost and binds V by its SHA-256).
	PCA *Components `json:"pca,omitempty"`
	// Stump makes the map x' = [z, 1]: the per-feature map and the bias,
	// without the unit-ball map, for a decision stump (package stump),
	// which decides on a feature's value z_j before clip_1 (z_j in
	// [-1, 1] in Bounds mode, the range of the stump's threshold grid). A
	// per-row map with public constants; it needs Bounds mode and no
	// projection or principal components.
	Stump bool `json:"stump,omitempty"`
	// Missing makes a missing numeric cell (datasets.IsMissing: an empty
	// cell, "?", "NA", "NaN", ...; NaN in the raw row) map to z_j = 0, the
	// middle of the feature's map (the middle of [lo, hi], the centre m,
	// the mean): a per-row map. NewRowMap sets it; a map without it (the
	// files of earlier versions) refuses a missing cell.
	Missing bool `json:"missing,omitempty"`
	// Text makes a cell of a numeric feature that is neither a number nor
	// missing (a text cell) read as a missing cell (datasets.TextMissing):
	// the fit decided the feature's type (privately, privbounds.
	// EstimateCentres) and the feature is numeric. It needs Missing. A map
	// without it refuses a text cell.
	Text bool `json:"text,omitempty"`
	// Words state the map in words.
	Words string `json:"map"`
}

// width returns the number of entries of z: the numeric features and the
// indicators of the categorical ones.
func (p *RowMap) width() int {
	cats, numeric := p.layout()
	w := numeric
	for _, c := range cats {
		w += len(c)
	}
	return w
}

// layout returns, for every feature, its categories (nil for a numeric
// feature), and the number of numeric features.
func (p *RowMap) layout() (cats [][]string, numeric int) {
	if len(p.Categories) == 0 {
		return nil, len(p.Features)
	}
	cats = make([][]string, len(p.Features))
	numeric = len(p.Features)
	for _, c := range p.Categories {
		if j := slices.Index(p.Features, c.Column); j >= 0 && cats[j] == nil {
			cats[j] = c.Values
			numeric--
		}
	}
	return cats, numeric
}

// Indicator reports whether mapped input i (of the per-feature map, before
// any projection) is a one-hot indicator of a categorical feature, whose
// value is 0 or 1, rather than a numeric feature's.
func (p *RowMap) Indicator(i int) bool {
	cats, _ := p.layout()
	off := 0
	for j := range p.Features {
		w := 1
		if cats != nil && cats[j] != nil {
			w = len(cats[j])
		}
		if i < off+w {
			return cats != nil && cats[j] != nil
		}
		off += w
	}
	return false
}

// NumericFeatures returns the names of the numeric features, in order:
// those Lo, Hi, Mean and Scale describe.
func (p *RowMap) NumericFeatures() []string {
	cats, _ := p.layout()
	var out []string
	for j, f := range p.Features {
		if cats == nil || cats[j] == nil {
			out = append(out, f)
		}
	}
	return out
}

// CategoryIndex returns the index of the category text among the declared
// categories of feature j (the raw value Apply takes for it), -1 for a text
// that is not declared, and whether feature j is categorical.
func (p *RowMap) CategoryIndex(j int, text string) (float64, bool) {
	for _, c := range p.Categories {
		if c.Column == p.Features[j] {
			return float64(c.Index(text)), true
		}
	}
	return 0, false
}

// NumericColumns returns the columns of the raw rows X (n x len(features))
// that are not declared categorical in s: X itself when none is.
func NumericColumns(X *mat.Dense, features []string, s datasets.Schema) *mat.Dense {
	if len(s.Categories) == 0 || X == nil {
		return X
	}
	var keep []int
	for j, f := range features {
		if _, ok := s.Categorical(f); !ok {
			keep = append(keep, j)
		}
	}
	n, _ := X.Dims()
	if len(keep) == 0 || n == 0 {
		return nil
	}
	out := mat.NewDense(n, len(keep), nil)
	for i := range n {
		row, src := out.RawRowView(i), X.RawRowView(i)
		for k, j := range keep {
			row[k] = src[j]
		}
	}
	return out
}

// MaxWidth is the most entries a mapped row may have before any
// projection (the numeric features and the indicators of the categorical
// ones): as many as a header's columns (datasets.MaxColumns). A schema of
// more categories would make every row a dense vector of that many
// entries; NewRowMap refuses it before any row is mapped.
const MaxWidth = datasets.MaxColumns

// NewRowMap builds the map of mode for the feature columns, with the bounds
// the schema declares for the numeric ones (Bounds mode: every numeric
// feature needs one, and every bound must name a numeric feature; errors
// wrap datasets.ErrSchema) and its categorical columns one-hot encoded;
// trainRows (n x d raw values; NaN for a missing cell) is read only by
// Standardize, which fits its statistics on the numeric columns, skipping
// missing cells. The map sets Missing.
//
// A map whose rows would have more than MaxWidth entries (the numeric
// features and the indicators of the categories) is refused, an error
// wrapping datasets.ErrSchema: declare fewer categories, hash the column
// (leave it out of the schema: its text is then hashed into public
// buckets), or leave columns out (train --ignore).
func NewRowMap(mode Mode, features []string, s datasets.Schema, trainRows *mat.Dense) (*RowMap, error) {
	p := &RowMap{Mode: mode, Features: append([]string(nil), features...), Missing: true}
	for _, f := range features {
		if c, ok := s.Categorical(f); ok {
			c.Values = slices.Clone(c.Values)
			p.Categories = append(p.Categories, c)
		}
	}
	if err := datasets.ValidateCategories(p.Categories); err != nil {
		return nil, err
	}
	if w := p.width(); w > MaxWidth {
		return nil, fmt.Errorf("%w: mapped rows of %d entries, more than MaxWidth (%d): declare fewer categories or leave columns out", datasets.ErrSchema, w, MaxWidth)
	}
	numeric := p.NumericFeatures()
	switch mode {
	case Bounds:
		var missing []string
		for _, f := range numeric {
			b, ok := s.Bound(f)
			if !ok {
				missing = append(missing, f)
				continue
			}
			p.Lo, p.Hi = append(p.Lo, b.Lo), append(p.Hi, b.Hi)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%w: no bound declared for feature column(s) %q: every numeric feature needs column,lo,hi", datasets.ErrSchema, missing)
		}
		for _, b := range s.Bounds {
			if !slices.Contains(numeric, b.Column) {
				return nil, fmt.Errorf("%w: a bound names column %q, which is not a numeric feature column", datasets.ErrSchema, b.Column)
			}
		}
	case None:
	case Standardize:
		if X := NumericColumns(trainRows, features, s); len(numeric) > 0 {
			std, err := fitStandardizer(X, true)
			if err != nil {
				return nil, err
			}
			p.Mean, p.Scale = std.Mean, std.Scale
		}
	default:
		return nil, mode.Validate()
	}
	p.Words = p.Explain()
	return p, nil
}

// MapWords states the map of mode in words (RowMap.Words), with declared
// bounds.
func MapWords(mode Mode) string { return mapWords(mode, false) }

// Explain states p's map in words (what RowMap.Words holds): MapWords, for
// estimated bounds where they came from, and the one-hot encoding of the
// categorical columns.
func (p *RowMap) Explain() string {
	w := mapWords(p.Mode, p.Estimated)
	if p.Log > 0 && p.Mode == Bounds {
		w = logWords(p.Estimated, p.Log)
	}
	if pr := p.Project; pr != nil {
		w += fmt.Sprintf("; before the unit-ball map, z is projected to u = R z in %d dimensions, R a %d x %d matrix of independent N(0, 1/%d) entries from a PCG generator seeded with %d (public, data-independent), and x' = [clip_1(u), 1] / sqrt(2)", pr.K, pr.K, p.width(), pr.K, pr.Seed)
	}
	if c := p.PCA; c != nil {
		in := "z"
		if p.Project != nil {
			in = "u"
		}
		w += fmt.Sprintf("; then %s is replaced by its coordinates V clip_1(%s) on %d private principal directions (V, %d x %d, orthonormal rows, in the file; released by the private step of the ledger), and x' = [clip_1(V clip_1(%s)), 1] / sqrt(2)", in, in, len(c.V), len(c.V), p.ComponentWidth(), in)
	}
	if p.Stump {
		w = strings.Replace(w, "x' = [clip_1(z), 1] / sqrt(2), clip_1 scaling a row of norm above 1 to norm 1, so ||x'|| <= 1", "x' = [z, 1] (the stump map: no unit-ball map, the decision stump's thresholds apply to z_j in [-1, 1])", 1)
	}
	if p.Text {
		w = "a cell that is neither a number nor missing reads as missing; " + w
	}
	var names, hashed, parts []string
	for _, c := range p.Categories {
		if c.Hash > 0 {
			hashed = append(hashed, fmt.Sprintf("%s (%d buckets)", c.Column, c.Hash))
		} else {
			names = append(names, c.Column)
		}
	}
	if len(names) > 0 {
		parts = append(parts, "categorical columns "+strings.Join(names, ", ")+" one-hot: z holds, for each, an indicator per declared category (1 for the row's category), all 0 when the row's value is not a declared category")
	}
	if len(hashed) > 0 {
		parts = append(parts, "text columns "+strings.Join(hashed, ", ")+" hashed one-hot: z holds, for each, an indicator per bucket, 1 for the bucket of the cell's text (the 64-bit FNV-1a hash of its bytes modulo the buckets, a public function), all 0 for a missing cell")
	}
	if len(parts) == 0 {
		return w
	}
	return strings.Join(parts, "; ") + "; numeric columns: " + w
}

// TextCells is what the map does with a text cell of a numeric feature
// (Text): read it as missing, or refuse it.
func (p *RowMap) TextCells() datasets.TextCells {
	if p.Text {
		return datasets.TextMissing
	}
	return datasets.TextError
}

// logWords states the Bounds map on the log scale of half-width w
// (RowMap.Log).
func logWords(estimated bool, w float64) string {
	g := fmt.Sprintf("z_j = clamp(g((x_j - m_j) / s_j) / %g, -1, 1) with g(t) = sign(t) log2(1 + |t|) (the signed log scale), m_j = (lo_j + hi_j)/2 and s_j = (hi_j - lo_j)/2, ", w)
	if estimated {
		return g + "the centre m_j and the spread s_j estimated privately from the training rows (see the ledger), then used as public constants; " + rowMap
	}
	return g + "public constants m_j = 0 and s_j = 1, which read no row; " + rowMap
}

// rowMap states the unit-ball map that ends every feature map.
const rowMap = "x' = [clip_1(z), 1] / sqrt(2), clip_1 scaling a row of norm above 1 to norm 1, so ||x'|| <= 1; a row whose label is not declared maps to 0"

// SignedLog2 returns g(x) = sign(x) log2(1 + |x|): odd, strictly
// increasing, about x/ln 2 near 0 and log2|x| far from it, finite for every
// finite x (at most 1024 in magnitude). The log scale of RowMap.Log.
func SignedLog2(x float64) float64 {
	return math.Copysign(math.Log1p(math.Abs(x))/math.Ln2, x)
}

func mapWords(mode Mode, estimated bool) string {
	switch mode {
	case Bounds:
		if estimated {
			return "z_j = (2 clamp(x_j, lo_j, hi_j) - lo_j - hi_j) / (hi_j - lo_j) with the bounds estimated privately from the training rows (see the ledger), then used as public constants; " + rowMap
		}
		return "z_j = (2 clamp(x_j, lo_j, hi_j) - lo_j - hi_j) / (hi_j - lo_j) with the declared bounds; " + rowMap
	case Standardize:
		return "z_j = (x_j - mean_j) / scale_j with statistics fitted on the training split (not private); " + rowMap
	}
	return "z = x; " + rowMap
}

// Check returns an error unless the map is well-formed: a known mode, at
// least one feature, and finite constants of the right lengths (lo < hi,
// positive scales); a stump's map (Stump) is of mode Bounds, without a
// projection or principal components. A model file's reader calls it.
func (p *RowMap) Check() error {
	if err := p.Mode.Validate(); err != nil {
		return err
	}
	if len(p.Features) == 0 {
		return fmt.Errorf("%w: preprocessing without features", datasets.ErrInvalid)
	}
	if err := datasets.ValidateCategories(p.Categories); err != nil {
		return fmt.Errorf("%w: %w", datasets.ErrInvalid, err)
	}
	for _, c := range p.Categories {
		if !slices.Contains(p.Features, c.Column) {
			return fmt.Errorf("%w: categorical column %q is not a feature", datasets.ErrInvalid, c.Column)
		}
	}
	if i := slices.IndexFunc(p.Features, func(f string) bool { return f == "" }); i >= 0 || len(p.Features) != len(uniq(p.Features)) {
		return fmt.Errorf("%w: feature names empty or repeated", datasets.ErrInvalid)
	}
	if pr := p.Project; pr != nil {
		if err := checkProjection(pr.K, p.width()); err != nil {
			return err
		}
	}
	if c := p.PCA; c != nil {
		if err := checkComponents(c, p.ComponentWidth()); err != nil {
			return err
		}
	}
	if p.Text && !p.Missing {
		return fmt.Errorf("%w: text cells read as missing, but no missing cells", datasets.ErrInvalid)
	}
	if p.Stump && (p.Mode != Bounds || p.Project != nil || p.PCA != nil) {
		return fmt.Errorf("%w: a stump map needs mode bounds, no projection and no components (mode %s, projection %v, components %v)", datasets.ErrInvalid, p.Mode, p.Project != nil, p.PCA != nil)
	}
	numeric := p.NumericFeatures()
	d := len(numeric)
	finite := func(vs []float64) bool {
		for _, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
		return true
	}
	switch {
	case (p.Estimated || p.Log != 0) && p.Mode != Bounds:
		return fmt.Errorf("%w: estimated bounds or the log scale with the preprocessing %s", datasets.ErrInvalid, p.Mode)
	case !(p.Log >= 0) || math.IsInf(p.Log, 1):
		return fmt.Errorf("%w: log scale half-width %v, want finite >= 0", datasets.ErrInvalid, p.Log)
	}
	switch p.Mode {
	case Bounds:
		if len(p.Lo) != d || len(p.Hi) != d || !finite(p.Lo) || !finite(p.Hi) {
			return fmt.Errorf("%w: bounds of %d and %d values for %d features", datasets.ErrInvalid, len(p.Lo), len(p.Hi), d)
		}
		for j := range p.Lo {
			if !(p.Lo[j] < p.Hi[j]) {
				return fmt.Errorf("%w: feature %q bounds [%v, %v]", datasets.ErrInvalid, numeric[j], p.Lo[j], p.Hi[j])
			}
		}
	case Standardize:
		if len(p.Mean) != d || len(p.Scale) != d || !finite(p.Mean) || !finite(p.Scale) {
			return fmt.Errorf("%w: standardizer of %d and %d values for %d features", datasets.ErrInvalid, len(p.Mean), len(p.Scale), d)
		}
		for j, s := range p.Scale {
			if !(s > 0) {
				return fmt.Errorf("%w: feature %q scale %v", datasets.ErrInvalid, numeric[j], s)
			}
		}
	}
	return nil
}

// uniq returns the distinct strings of s.
func uniq(s []string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, v := range s {
		m[v] = true
	}
	return m
}

// Rows maps the rows idx of enc (raw feature values parsed against a
// schema) to model inputs, and returns them with their labels and which of
// them are null rows (mapped to zero, bias included).
func (p *RowMap) Rows(enc *datasets.Encoded, idx []int) (*mat.Dense, []float64, []bool, error) {
	// The trainer reads these rows in a random order: advised onto huge
	// pages before they are written (hugepage.Advise).
	X := mat.NewDense(len(idx), p.Dim(), hugepage.Make(len(idx)*p.Dim()))
	y := make([]float64, len(idx))
	null := make([]bool, len(idx))
	apply := p.mapper()
	for r, i := range idx {
		y[r], null[r] = enc.Y[i], enc.Null[i]
		if null[r] {
			continue
		}
		if err := apply(X.RawRowView(r), enc.Row(i)); err != nil {
			return nil, nil, nil, fmt.Errorf("data row %d: %w", enc.DataRow(i), err)
		}
	}
	return X, y, null, nil
}

// RowsInPlace maps the first n rows of enc as Rows does (a null row to
// zero), in order, into enc's own storage when a model input fits in the
// room of a raw row (Dim() <= enc.Stride, as for the rows of
// datasets.Table.EncodeInPlace without one-hot blocks), and otherwise into
// new storage advised onto huge pages. The result (n x Dim(), contiguous
// rows) shares that storage; the labels and null marks are enc.Y and
// enc.Null. The raw rows are gone either way: enc.X is set to nil, also
// on an error (Apply's, naming the data row).
func (p *RowMap) RowsInPlace(enc *datasets.Encoded, n int) (*mat.Dense, error) {
	d, s := p.Dim(), max(enc.Stride, enc.D)
	var out []float64
	if d <= s {
		// Row r's input ends at (r+1) d <= (r+1) s, where row r+1's raw
		// values start: every raw row is read before its room is written.
		out = enc.X[:n*d]
	} else {
		out = hugepage.Make(n * d) // advised before it is filled
	}
	defer func() { enc.X = nil }()
	apply := p.mapper()
	x := make([]float64, enc.D)
	for r := range n {
		dst := out[r*d : (r+1)*d]
		if enc.Null[r] {
			clear(dst)
			continue
		}
		copy(x, enc.Row(r))
		if err := apply(dst, x); err != nil {
			return nil, fmt.Errorf("data row %d: %w", enc.DataRow(r), err)
		}
	}
	return mat.NewDense(n, d, out), nil
}
