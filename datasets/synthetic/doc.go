// Package synthetic draws labelled data sets from planted models, seeded so
// that the same arguments give the same data on every platform: Logistic
// (a planted logistic model, labels -1/+1) and LinearGaussian (the linear
// Gaussian model of Wang's per-instance DP, real labels). Rows are uniform
// in the unit ball, so ||x|| <= 1 = kappa holds without clipping, and each
// data set returns its planted parameter theta beside it.
//
// The tests, examples and benchmarks of the other packages use it where a
// data set with a known truth is needed. Errors wrap ErrConfig, which wraps
// datasets.ErrInvalid.
package synthetic
