package datasets

// defaultRanges are the shipped feature bounds of the embedded Wisconsin
// diagnostic breast cancer data, in the column order of its CSV: for each
// feature, its mean plus and minus three standard deviations over the
// published data set (UCI Machine Learning Repository, data set 17),
// rounded to three significant digits. They were computed once from that
// public data set and are constants of the code.
var defaultRanges = [...]struct {
	column string
	lo, hi float64
}{
	{"mean_radius", 3.56, 24.7},
	{"mean_texture", 6.4, 32.2},
	{"mean_perimeter", 19.1, 165},
	{"mean_area", -400, 1.71e+03},
	{"mean_smoothness", 0.0542, 0.139},
	{"mean_compactness", -0.054, 0.263},
	{"mean_concavity", -0.15, 0.328},
	{"mean_concave_points", -0.0674, 0.165},
	{"mean_symmetry", 0.099, 0.263},
	{"mean_fractal_dimension", 0.0416, 0.084},
	{"radius_error", -0.426, 1.24},
	{"texture_error", -0.437, 2.87},
	{"perimeter_error", -3.19, 8.93},
	{"area_error", -96, 177},
	{"smoothness_error", -0.00196, 0.016},
	{"compactness_error", -0.0282, 0.0792},
	{"concavity_error", -0.0586, 0.122},
	{"concave_points_error", -0.0067, 0.0303},
	{"symmetry_error", -0.00424, 0.0453},
	{"fractal_dimension_error", -0.00414, 0.0117},
	{"worst_radius", 1.78, 30.8},
	{"worst_texture", 7.25, 44.1},
	{"worst_perimeter", 6.54, 208},
	{"worst_area", -826, 2.59e+03},
	{"worst_smoothness", 0.0639, 0.201},
	{"worst_compactness", -0.217, 0.726},
	{"worst_concavity", -0.353, 0.898},
	{"worst_concave_points", -0.0824, 0.312},
	{"worst_symmetry", 0.105, 0.476},
	{"worst_fractal_dimension", 0.0298, 0.138},
}

// DefaultBounds returns the public feature bounds shipped for the embedded
// breast cancer data. They are constants, never computed from the rows a
// fit receives, so a fit with them is covered by its certificate whatever
// the table. Because they were derived from the published data set itself,
// an accuracy measured on that same data with them is optimistic: for other
// data, declare bounds from knowledge of the domain. Values outside a bound
// are clamped into it.
func DefaultBounds() []Bound {
	out := make([]Bound, len(defaultRanges))
	for i, r := range defaultRanges {
		out[i] = Bound{Column: r.column, Lo: r.lo, Hi: r.hi}
	}
	return out
}
