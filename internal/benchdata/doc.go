// Package benchdata generates the synthetic data sets of the module's tests
// and benchmarks: dense rows in the unit ball (as after the Adult
// preprocessing) with binary or multiclass labels from a planted linear
// model. The trainer's and the graph engine's tests and benchmarks draw from
// this one generator, so a seed names the same data in both. The package is
// internal: a convenience of this module's tests, not part of its API.
package benchdata
