package runflags

import (
	"slices"
	"strings"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/selection"
)

// checkPCA checks --pca and --pca-share: k >= 1, a private run per row
// with delta > 0 (Analyze Gauss is (eps, delta)-DP: a pure eps budget
// cannot pay for it), and shares of the budget that leave the release a
// positive part. The directions spend a share of --delta and the release
// the rest, so a named mechanism must take delta (without one, the rule
// releases by AMP with --delta).
func (f *Flags) checkPCA(set map[string]bool, r *Run) error {
	switch {
	case !set["pca"] && set["pca-share"]:
		return usagef("--pca-share applies with --pca k")
	case !set["pca"]:
		return nil
	case f.PCA < 1:
		return usagef("--pca %d, want k >= 1 principal directions (leave --pca out for none)", f.PCA)
	case !r.Private():
		return usagef("--pca computes the principal directions privately, paid from the budget: give --epsilon and --delta (a private run)")
	case f.Partitions > 1 || f.PrivacyID != "":
		return usagef("--pca is for a single fit per row; a partitioned fit (--partitions, --privacy-id) takes --project k")
	case !(r.Budget.Delta > 0):
		return usagef("--pca: the private directions (Analyze Gauss) are (eps, delta)-DP: give --delta > 0 (e.g. 1e-5)")
	case !check.OpenUnit(f.PCAShare):
		return usagef("--pca-share %v leaves nothing for the %s: want a share in (0, 1) of --epsilon and --delta", f.PCAShare, map[bool]string{true: "release", false: "principal directions"}[f.PCAShare >= 1])
	}
	bs := 0.0
	if r.Options.Preprocess == "" && !r.Schema.Declared() {
		bs = f.BoundsShare // the bounds are estimated
	}
	if bs+f.PCAShare >= 1 {
		return usagef("--bounds-share %v and --pca-share %v spend %v of --epsilon: leave the release a positive part", bs, f.PCAShare, bs+f.PCAShare)
	}
	r.Options.PCA, r.Options.PCAShare = f.PCA, f.PCAShare
	return nil
}

// checkPrivacy checks the mechanism, the budget and the noise source.
func (f *Flags) checkPrivacy(set map[string]bool, r *Run) error {
	name, private := f.Mechanism.value()
	if set["select"] && (private || !set["epsilon"] && !set["delta"]) {
		return usagef("--select applies to a private run without --mechanism (give --epsilon, and no --mechanism)")
	}
	if !private && !set["mechanism"] {
		return f.checkSelect(set, r)
	}
	if !private {
		for _, name := range []string{"epsilon", "delta", "noise", "noise-seed"} {
			if set[name] {
				return usagef("--%s applies to a private release; choose --mechanism %s", name, release.List())
			}
		}
		return nil
	}
	method, err := release.Lookup(name)
	if err != nil {
		return usagef("--mechanism %q, want none, %s", name, release.List())
	}
	m := method.Name()
	r.Budget = dp.Budget{Epsilon: f.Epsilon, Delta: f.Delta}
	if set["pca"] && m.Pure() {
		return usagef("--pca with --mechanism %s: --pca spends a share of --delta, so the mechanism must take delta (%s)", m, deltaMethods())
	}
	if err := method.CheckBudget(r.Budget); err != nil {
		return usagef("--mechanism %s --epsilon %v --delta %v: %w%s", m, f.Epsilon, f.Delta, err, PrivacyHint(m, err))
	}
	if !method.SGD() {
		// The SGD knobs, and the partitions whose SGD runs a partitioned
		// fit averages, apply to the methods that release an SGD run.
		// A method may take some of them for a run of its own
		// (release.KnobTaker: dp-sgd).
		taken := release.TakenKnobs(method)
		for _, name := range sgdFlags {
			switch {
			case !set[name] || release.TakesKnob(method, release.Knob(name)):
			case len(taken) > 0:
				return usagef("--%s does not apply to --mechanism %s, which takes --%s", name, m, joinKnobs(taken))
			default:
				return usagef("--%s does not apply to --mechanism %s (no SGD run): the SGD knobs (--%s) apply to %s", name, m, strings.Join(sgdFlags, ", --"), release.SGDList())
			}
		}
	}
	r.Options.Mechanism, r.Options.Method = m, method
	return f.checkNoise(set, r)
}

// checkSelect checks a private run without --mechanism: the setting is
// chosen by the public rule or a private selection (--select), which sets
// the knobs itself; the SGD knobs are refused, as a named mechanism that
// runs no SGD refuses them. A private selection is proven for a single fit,
// where it tunes on a part of the training rows and releases on the rest
// (holdout) or releases the best of several runs on the same rows
// (random-stopping); a partitioned fit (--partitions, --privacy-id)
// releases the average of the partitions' SGD runs once, by the public
// rule (selection.OutputFamily: gamma, or the analytic Gaussian with
// --delta) or a named mechanism, so --select is refused there.
func (f *Flags) checkSelect(set map[string]bool, r *Run) error {
	method := selection.Method(f.Select)
	if method != selection.Rule && !slices.Contains(selection.Methods(), method) {
		return usagef("--select %q, want %s, %s or %s", f.Select, selection.Rule, selection.Holdout, selection.RandomStopping)
	}
	r.Budget = dp.Budget{Epsilon: f.Epsilon, Delta: f.Delta}
	if err := r.Budget.Validate(); err != nil {
		return usagef("--epsilon %v --delta %v: %w", f.Epsilon, f.Delta, err)
	}
	if method != selection.Rule && set["privacy-id"] {
		return usagef("--select %s with --privacy-id: a private selection is proven for a fit per row; leave --select out or give --mechanism", method)
	}
	if method != selection.Rule && f.Partitions > 1 {
		// partition.UseRule's reason, in the flags' words.
		return usagef("--select %s with --partitions %d: a private selection is proven for a single fit; leave --select out or give --mechanism", method, f.Partitions)
	}
	how := "by a public rule"
	if method != selection.Rule {
		how = "privately"
	}
	for _, name := range append([]string{"lambda"}, sgdFlags...) {
		if set[name] && name != "partitions" && name != "privacy-id" {
			return usagef("--%s: without --mechanism the release chooses the knobs %s (--select %s); give --mechanism to set them", name, how, method)
		}
	}
	r.Options.Select = &selection.Config{Method: method}
	return f.checkNoise(set, r)
}

// checkNoise checks the noise source of a private run.
func (f *Flags) checkNoise(set map[string]bool, r *Run) error {
	switch f.Noise {
	case "secure":
		if set["noise-seed"] {
			return usagef("--noise-seed applies to --noise seeded")
		}
	case "seeded":
		if !set["noise-seed"] {
			return usagef("--noise seeded needs --noise-seed N (separate from --seed; it is published, so the release is not private)")
		}
		r.Options.Noise = perturb.Seeded(f.NoiseSeed)
	default:
		return usagef("--noise %q, want secure or seeded", f.Noise)
	}
	return nil
}

// deltaMethods returns the names of the release methods that spend a
// delta, joined by ", ".
func deltaMethods() string {
	var out []string
	for _, m := range release.Methods() {
		if !m.Name().Pure() {
			out = append(out, string(m.Name()))
		}
	}
	return strings.Join(out, ", ")
}

// PrivacyHint says how to fix the privacy flags that gave err
// (perturb.Hint).
var PrivacyHint = perturb.Hint

// joinKnobs returns the knobs' flag names joined by ", --".
func joinKnobs(ks []release.Knob) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", --")
}
