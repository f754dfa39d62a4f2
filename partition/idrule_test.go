package partition

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/regularizers"
	"github.com/stabpriv/stabpriv/release/autoknobs"
	"github.com/stabpriv/stabpriv/selection"
	"github.com/stabpriv/stabpriv/trainer"
)

// idRuleFit fits d per privacy ID (column user, c rows per ID) on P
// partitions with the options opts (the rule when opts names nothing), the
// bounds of idSetup's fits, seed 9 and seeded noise.
func idRuleFit(t *testing.T, d idData, b dp.Budget, c, parts int, testFrac float64, opts private.Options) *modelfile.Released {
	t.Helper()
	schema := datasets.Schema{Label: "y", Classes: []string{"a", "b"},
		Bounds: []datasets.Bound{{Column: "f0", Lo: -3, Hi: 4}, {Column: "f1", Lo: -3, Hi: 4}}}
	if opts.Mechanism == "" && opts.Select == nil {
		opts.Select = &selection.Config{}
	}
	opts.TestFrac, opts.Seed, opts.Noise, opts.PrivacyID, opts.MaxRowsPerID = testFrac, 9, perturb.Seeded(5), "user", c
	r, err := Fit(context.Background(), d.tables(t), schema, b, opts, parts)
	if err != nil {
		t.Fatalf("c = %d, P = %d, %+v: %v", c, parts, b, err)
	}
	return r
}

// modelJSON returns r's model file.
func modelJSON(t *testing.T, r *modelfile.Released) string {
	t.Helper()
	var w strings.Builder
	if err := r.Write(&w); err != nil {
		t.Fatal(err)
	}
	return w.String()
}

// TestFitPrivacyIDRule checks the public rule of a fit per privacy ID: it
// releases, byte for byte with the same seeded noise, the model file of
// RuleMechanism named with the automatic knobs, and the weights and
// certificate of the mechanism named with the knobs the rule picks
// written out (selection.RuleSetting's mechanism, its factor
// autoknobs.GroupScale(c) = sqrt(c) on autoknobs.Choose's lambda at
// n = c * training IDs, its clipping norm, the bounded inverse-t
// schedule); at c = 1
// that is the rule for rows. Verify accepts the file, and refuses it when
// its knobs are the rule's for rows at c > 1 (so Verify checks the factor).
// The knobs depend on the layout's count of IDs, never on how many rows
// the IDs have: every ID given other rows, the count of rows changed, the
// knobs and the sensitivity stay.
func TestFitPrivacyIDRule(t *testing.T) {
	base := idBase(40, 1)
	for _, b := range []dp.Budget{{Epsilon: 1}, {Epsilon: 0.9, Delta: 1e-5}} {
		for _, c := range []int{1, 3} {
			for _, parts := range []int{1, 3} {
				rule := idRuleFit(t, base, b, c, parts, 0.2, private.Options{})
				checkPartitioned(t, "the rule", rule)
				named := idRuleFit(t, base, b, c, parts, 0.2, private.Options{Mechanism: RuleMechanism(b), Auto: true})
				if modelJSON(t, rule) != modelJSON(t, named) {
					t.Errorf("c = %d, P = %d, %+v: the rule's release differs from %s with the automatic knobs", c, parts, b, RuleMechanism(b))
				}
				run := rule.Certificate.Run
				if run.N != rule.Split.TrainRows || run.N%c != 0 || rule.Split.Rows != c*rule.Partitions.IDs {
					t.Fatalf("c = %d: n = %d, split %+v, partitions %+v", c, run.N, rule.Split, rule.Partitions)
				}
				st := selection.RuleSetting(b, losses.Logistic{}, 1, run.N, run.D, c)
				if st.Mechanism != RuleMechanism(b) || st.Scale != math.Sqrt(float64(c)) || rule.Certificate.Mechanism != st.Mechanism {
					t.Fatalf("c = %d, %+v: RuleSetting %v, the release's mechanism %s", c, b, st, rule.Certificate.Mechanism)
				}
				k, err := autoknobs.Choose(run.N, run.D, 1, st.Mechanism, b)
				if err != nil {
					t.Fatal(err)
				}
				lambda := k.Lambda * st.Scale
				if run.Lambda != lambda || run.Clip != k.Clip || (c > 1) == (run.Lambda == k.Lambda) {
					t.Errorf("c = %d, %+v: lambda %v, clip %v; the rule picks lambda %v (the rule for rows: %v), clip %v", c, b, run.Lambda, run.Clip, lambda, k.Lambda, k.Clip)
				}
				knobs := trainer.Config{Reg: regularizers.ElasticNet{Lambda: lambda}, Clip: k.Clip, Schedule: trainer.BoundedInverseT}
				written := idRuleFit(t, base, b, c, parts, 0.2, private.Options{Mechanism: st.Mechanism, Trainer: knobs})
				cj, _ := json.Marshal(rule.Certificate)
				wj, _ := json.Marshal(written.Certificate)
				if !slices.Equal(rule.Model.W, written.Model.W) || string(cj) != string(wj) || written.AutoKnobs {
					t.Errorf("c = %d, P = %d, %+v: the rule's release differs from %s with lambda %v, clip %v written out", c, parts, b, st.Mechanism, lambda, k.Clip)
				}
				// Other rows for every ID (their count included), the same
				// IDs: the same knobs and sensitivity.
				other := idBase(40, 77)
				if slices.Equal(rowCounts(other), rowCounts(base)) {
					t.Fatal("the data sets have the same row counts")
				}
				r2 := idRuleFit(t, other, b, c, parts, 0.2, private.Options{})
				if r2.Certificate.Lambda != rule.Certificate.Lambda || r2.Certificate.L2Sensitivity != rule.Certificate.L2Sensitivity || r2.Certificate.NoiseScale != rule.Certificate.NoiseScale {
					t.Errorf("c = %d, P = %d: other rows for the same IDs move lambda %v -> %v or Delta %v -> %v", c, parts, rule.Certificate.Lambda, r2.Certificate.Lambda, rule.Certificate.L2Sensitivity, r2.Certificate.L2Sensitivity)
				}
				if c == 1 {
					continue
				}
				// A file claiming automatic knobs with the rule's lambda
				// for rows is refused.
				rows := idRuleFit(t, base, b, c, parts, 0.2, private.Options{Mechanism: st.Mechanism,
					Trainer: trainer.Config{Reg: regularizers.ElasticNet{Lambda: k.Lambda}, Clip: k.Clip, Schedule: trainer.BoundedInverseT}})
				rows.AutoKnobs = true
				var buf bytes.Buffer
				if err := rows.Write(&buf); err != nil {
					t.Fatal(err)
				}
				back, err := modelfile.Read(&buf)
				if err != nil {
					t.Fatal(err)
				}
				if v, _, err := modelfile.Verify(back); err == nil && v == modelfile.PrivateRelease {
					t.Errorf("c = %d, P = %d: Verify accepts automatic knobs at the rule's lambda for rows", c, parts)
				}
			}
		}
	}
}

// rowCounts returns the number of rows of each user of d, by user.
func rowCounts(d idData) []int {
	m := map[string]int{}
	for _, rs := range d {
		for _, r := range rs {
			m[r.user]++
		}
	}
	var users []string
	for u := range m {
		users = append(users, u)
	}
	slices.Sort(users)
	out := make([]int, len(users))
	for i, u := range users {
		out[i] = m[u]
	}
	return out
}

// TestFitPrivacyIDRuleNeighbours trains by the public rule per privacy ID
// on data sets that differ in every row of one ID (labels flipped,
// features beyond the bounds, one row, c rows at the bounds, 3c + 1 rows
// at other positions and shards: idNeighbours), with the same seeds and
// seeded noise, for a pure budget and with delta, P = 1 and 3, test
// fraction 0 and 0.2; the released weights differ by at most the certified
// sensitivity (the noise is the same draw on both sides, so the distance
// is that of the trained averages), and the knobs, the sensitivity and the
// layout, which the rule reads, are the neighbours'.
func TestFitPrivacyIDRuleNeighbours(t *testing.T) {
	const c = 3
	base := idBase(40, 1)
	worst := 0.0
	for _, b := range []dp.Budget{{Epsilon: 1}, {Epsilon: 0.5, Delta: 1e-6}} {
		for _, parts := range []int{1, 3} {
			for _, testFrac := range []float64{0, 0.2} {
				r0 := idRuleFit(t, base, b, c, parts, testFrac, private.Options{})
				c0 := r0.Certificate
				for _, user := range []string{"u0", "u7", "u39"} {
					for name, rows := range idNeighbours(base, user, c) {
						r1 := idRuleFit(t, base.replace(user, rows), b, c, parts, testFrac, private.Options{})
						c1 := r1.Certificate
						if c1.L2Sensitivity != c0.L2Sensitivity || c1.Lambda != c0.Lambda || c1.Clip != c0.Clip || c1.Mechanism != c0.Mechanism || r1.Split != r0.Split || !slices.Equal(r1.Partitions.Sizes, r0.Partitions.Sizes) {
							t.Errorf("%+v, P = %d, %s, %s: the public parts differ between neighbours", b, parts, user, name)
						}
						dist := floats.Distance(r0.Model.W, r1.Model.W, 2)
						worst = math.Max(worst, dist/c0.L2Sensitivity)
						if dist > c0.L2Sensitivity {
							t.Errorf("%+v, P = %d, test fraction %g, %s, %s: ||w_S - w_S'|| = %.6g > Delta = %.6g", b, parts, testFrac, user, name, dist, c0.L2Sensitivity)
						}
					}
				}
			}
		}
	}
	t.Logf("largest realized distance over the certified Delta: %.4f", worst)
	if worst == 0 {
		t.Error("no neighbour moved the weights: the test compares nothing")
	}
}
