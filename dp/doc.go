// Package dp holds the privacy claim of a release: the Budget a fit may
// spend, the ledger of the Charges that spent it, and the Certificate that
// states the claim, its neighbouring relation, every constant of the run
// and what the claim does not cover.
//
// Every release method of stabpriv (package release: output perturbation,
// objective perturbation, AMP) writes a Certificate of this package, and
// every consumer (model files and their verification, the command line,
// the experiments) reads one. The format is versioned (Version) and pinned
// by golden files; docs/DESIGN.md, section 6, states what a certificate
// binds and why.
package dp
