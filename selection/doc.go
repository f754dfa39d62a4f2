// Package selection chooses a model privately, inside the budget of the
// release: Select runs a randomly stopped number of private runs of
// randomly drawn candidates (settings and mechanisms), each scored by noisy
// validation accuracy, and releases the best (Papernot & Steinke 2022,
// "Hyperparameter Tuning with Renyi Differential Privacy", Theorem 2 in its
// pure case; Liu & Talwar 2019 for the geometric law). The certificate's
// ledger lists the selection and the release, which add up to eps: the
// selection's own account of the budget it is handed, which a verifier
// rebuilds and a caller that owns a larger budget (private.Plan) takes
// from its ledger, as a release's (package release, "Ledgers").
//
// Candidates are release methods of package release prepared at the budget
// of one run: trained weights released by output perturbation
// (FromTrained), or rows that a method prepares afresh (FromRows: objective
// perturbation minimizes with new noise at every run). The validation rows
// must be disjoint from every candidate's training rows, as the parts of a
// ValidationSplit by position are. docs/DESIGN.md, section 12, holds the
// proof.
//
// When the user names neither the mechanism nor lambda, a private fit
// (private.Options.Select) releases by default RuleSetting, a public rule
// of the budget, the loss, the model's size and the number of training rows
// (Rule: no selection, no cost): objective perturbation or AMP, output
// perturbation where OutputFirst says so, DP-SGD for more than two classes
// with a delta where DPSGDFirst says so. Plan
// is the private selection it runs instead on request: the candidates are
// the mechanisms' automatic rules at a few factors (Settings), and with
// Holdout Select runs on a disjoint tuning part of the training rows
// while the chosen setting is released on the rest, each part at the whole
// budget (parallel composition, docs/DESIGN.md section 12.1); RandomStopping
// releases Select's best run instead. The model file publishes the plan and
// the choice (Record), and Record.Check recomputes the plan for a verifier.
package selection
