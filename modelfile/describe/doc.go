// Package describe writes a model file (package modelfile) in words, as
// the stabpriv command prints it: the outcome of a fit (Fit: the release
// and its certificate, the stability analysis, the non-private
// diagnostics), the verdict of certify on a file (Certificate), a
// released decision stump in the units of its column (StumpWords), and
// the rows a prediction could not score (Unscored). It reads only what the
// file publishes (and, for Fit, the run's source and noise seed), so
// printing costs no privacy.
package describe
