package datasets

// ReferenceStride sets the public reference sample of the embedded breast
// cancer file: its data rows 0, ReferenceStride, 2 ReferenceStride, ...
// (72 of the 569), a sample chosen by position alone. The shipped bounds
// (DefaultBounds) are computed from these rows, and the embedded table
// (DefaultTable) is the other 497 rows: the bounds are not statistics of
// the rows a release of the embedded table protects.
const ReferenceStride = 8

// defaultRanges are the shipped feature bounds of the embedded Wisconsin
// diagnostic breast cancer table, in the column order of its CSV, computed
// once from the public reference sample (DefaultReference) and kept as
// constants: for each feature, the sample's mean plus and minus three
// standard deviations (the sample standard deviation, divisor n - 1),
// rounded outward to three significant digits. The interval is centred on
// the sample's mean, so the feature map (Bounds) centres the table's rows
// too, which the automatic knobs were fitted with. TestDefaultBounds
// recomputes them.
var defaultRanges = [...]struct {
	column string
	lo, hi float64
}{
	{"mean_radius", 3.4, 24},
	{"mean_texture", 6.03, 33},
	{"mean_perimeter", 17.8, 161},
	{"mean_area", -400, 1630},
	{"mean_smoothness", 0.0491, 0.15},
	{"mean_compactness", -0.0522, 0.279},
	{"mean_concavity", -0.17, 0.37},
	{"mean_concave_points", -0.0646, 0.169},
	{"mean_symmetry", 0.0978, 0.271},
	{"mean_fractal_dimension", 0.0399, 0.0895},
	{"radius_error", -0.314, 1.17},
	{"texture_error", -0.744, 3.37},
	{"perimeter_error", -2.23, 8.26},
	{"area_error", -78.6, 162},
	{"smoothness_error", -0.000979, 0.0155},
	{"compactness_error", -0.0306, 0.0862},
	{"concavity_error", -0.114, 0.192},
	{"concave_points_error", -0.0107, 0.0364},
	{"symmetry_error", -0.00105, 0.0417},
	{"fractal_dimension_error", -0.00774, 0.0167},
	{"worst_radius", 0.42, 31.8},
	{"worst_texture", 7.1, 44.8},
	{"worst_perimeter", -3.58, 217},
	{"worst_area", -1040, 2800},
	{"worst_smoothness", 0.0609, 0.214},
	{"worst_compactness", -0.18, 0.716},
	{"worst_concavity", -0.337, 0.93},
	{"worst_concave_points", -0.0723, 0.309},
	{"worst_symmetry", 0.124, 0.451},
	{"worst_fractal_dimension", 0.0365, 0.138},
}

// DefaultBounds returns the public feature bounds shipped for the embedded
// breast cancer table (DefaultTable). They are constants computed from the
// reference sample (DefaultReference), rows of the UCI file that the table
// does not contain, never from the rows a fit receives: a release of the
// table with them is covered by its certificate, and the reference rows
// are treated as public (they are not protected by the claim). Values
// outside a bound are clamped into it.
func DefaultBounds() []Bound {
	out := make([]Bound, len(defaultRanges))
	for i, r := range defaultRanges {
		out[i] = Bound{Column: r.column, Lo: r.lo, Hi: r.hi}
	}
	return out
}
