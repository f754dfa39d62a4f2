// Package dp holds the privacy claim of a release, at the bottom of the
// module's imports: the Budget a fit may spend, the Ledger its Charges are
// taken from (Spend refuses a charge that would overspend, in exact
// arithmetic), the names of the mechanisms (Mechanism), and the Claim that
// states the guarantee, its neighbouring relation and what it does not
// cover; a claim's ledger is written from a Ledger (Claim.Account).
//
// It imports no other package of the module. The noise that makes a claim
// true (package perturb) and the training run that backs its sensitivity
// (package trainer) sit above it; package release attaches the run record
// to the claim in its Certificate, which every release method writes and
// every consumer (model files and their verification, the command line,
// the experiments) reads. The format is versioned (CertificateVersion) and
// pinned by golden files; docs/DESIGN.md, section 6, states what a
// certificate binds and why.
package dp
