package dp_test

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
)

// exactSum returns the sum of xs in exact arithmetic.
func exactSum(xs ...float64) *big.Rat {
	s := new(big.Rat)
	for _, x := range xs {
		s.Add(s, new(big.Rat).SetFloat64(x))
	}
	return s
}

// atMost reports whether the exact sum of xs is at most total.
func atMost(total float64, xs ...float64) bool {
	return exactSum(xs...).Cmp(new(big.Rat).SetFloat64(total)) <= 0
}

// TestRestNeverExceeds is a property test of the ledger's rule: for many
// random budgets split into random shares (the way a pipeline splits them:
// shares of the total as charges, the last part the rest), the charges add
// up to at most the claim in exact arithmetic, and the rest is the largest
// float64 that does (one ulp more exceeds the claim). The float64
// subtraction that the rule replaces exceeds the claim on a good part of
// these budgets, which the test counts so that it would notice a rule that
// never had anything to round.
func TestRestNeverExceeds(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 1))
	over := 0
	const runs = 20000
	for i := range runs {
		total := math.Exp(12*rng.Float64() - 8) // about 3e-4 to 50
		if i%4 == 0 {
			total = 1e-6 * rng.Float64() // a delta
		}
		k := 1 + rng.IntN(4)
		spent := make([]float64, k)
		for j := range spent {
			spent[j] = rng.Float64() / float64(k+1) * total
		}
		r := dp.Rest(total, spent...)
		if !atMost(total, append(spent, r)...) {
			t.Fatalf("total %v, spent %v: rest %v, the charges add up to more than the claim", total, spent, r)
		}
		if up := math.Nextafter(r, math.Inf(1)); atMost(total, append(spent, up)...) {
			t.Fatalf("total %v, spent %v: rest %v is not the largest (%v fits)", total, spent, r, up)
		}
		naive := total
		for _, s := range spent {
			naive -= s
		}
		if !atMost(total, append(spent, naive)...) {
			over++
		}
		ledger := make([]dp.Charge, 0, k+1)
		for _, s := range append(spent, r) {
			ledger = append(ledger, dp.Charge{Epsilon: s})
		}
		if err := (dp.Budget{Epsilon: total}).Covers(ledger); err != nil {
			t.Fatalf("total %v: the ledger of the rule %v is refused: %v", total, ledger, err)
		}
		// One ulp more on any charge is over the claim, and refused.
		j := rng.IntN(len(ledger))
		ledger[j].Epsilon = math.Nextafter(ledger[j].Epsilon, math.Inf(1))
		if atMost(total, func() []float64 {
			var xs []float64
			for _, c := range ledger {
				xs = append(xs, c.Epsilon)
			}
			return xs
		}()...) {
			continue // the rest had slack below an ulp of the larger charge
		}
		if err := (dp.Budget{Epsilon: total}).Covers(ledger); !errors.Is(err, dp.ErrBudget) {
			t.Fatalf("total %v: a ledger one ulp over the claim (%v) is accepted: %v", total, ledger, err)
		}
	}
	if over < runs/20 {
		t.Errorf("the float64 subtraction exceeded the claim in %d of %d splits: the test no longer exercises the rounding", over, runs)
	}
}

// TestPartNeverExceeds: k even parts of a budget add up to at most it in
// exact arithmetic, and the part is the largest that does.
func TestPartNeverExceeds(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 2))
	for range 20000 {
		total := math.Exp(12*rng.Float64() - 8)
		k := 1 + rng.IntN(100)
		p := dp.Part(total, k)
		kp := new(big.Rat).Mul(big.NewRat(int64(k), 1), new(big.Rat).SetFloat64(p))
		if kp.Cmp(new(big.Rat).SetFloat64(total)) > 0 {
			t.Fatalf("%d parts of %v: %v each add up to more", k, total, p)
		}
		up := math.Nextafter(p, math.Inf(1))
		if new(big.Rat).Mul(big.NewRat(int64(k), 1), new(big.Rat).SetFloat64(up)).Cmp(new(big.Rat).SetFloat64(total)) <= 0 {
			t.Fatalf("%d parts of %v: %v is not the largest part", k, total, p)
		}
	}
	for _, bad := range []float64{dp.Part(1, 0), dp.Part(math.Inf(1), 2), dp.Rest(math.NaN(), 1), dp.Rest(1, math.Inf(1))} {
		if !math.IsNaN(bad) {
			t.Errorf("a part or rest of a non-finite budget or of 0 parts is %v, want NaN", bad)
		}
	}
	if r := dp.Rest(1, 0.5, 0.5); r != 0 || math.Signbit(r) {
		t.Errorf("the rest of a spent budget is %v, want +0", r)
	}
}

// TestCovers checks the exact check of a ledger against its claim: the
// parts of the rows compose in parallel, an entry over the claim by an ulp
// (of eps or of delta) is refused, and so are negative or non-finite
// charges; the float64 sum that the check replaces is fooled by 0.1 + 0.9.
func TestCovers(t *testing.T) {
	tenth := 0.1
	nine := 1 - tenth // 0.9 in float64, but 0.1 + 0.9 > 1 in exact arithmetic
	if tenth+nine != 1 {
		t.Fatalf("the float64 sum of %v and %v is %v", tenth, nine, tenth+nine)
	}
	claim := dp.Budget{Epsilon: 1, Delta: 1e-6}
	for _, tc := range []struct {
		name   string
		ledger []dp.Charge
		want   string // "" for accepted
	}{
		{"empty", nil, ""},
		{"exact", []dp.Charge{{Epsilon: 0.5, Delta: 5e-7}, {Epsilon: 0.5, Delta: 5e-7}}, ""},
		{"rest rounded down", []dp.Charge{{Epsilon: tenth}, {Epsilon: dp.Rest(1, tenth)}}, ""},
		{"float64 rest", []dp.Charge{{Epsilon: tenth}, {Epsilon: nine}}, "eps add up to more than the claim"},
		{"delta over by an ulp", []dp.Charge{{Epsilon: 1, Delta: math.Nextafter(1e-6, 1)}}, "delta add up"},
		{"parallel parts", []dp.Charge{{Epsilon: 1, Rows: "tuning"}, {Epsilon: 0.7, Rows: "release"}, {Epsilon: 0.3, Rows: "release"}}, ""},
		{"parallel part over", []dp.Charge{{Epsilon: 1, Rows: "tuning"}, {Epsilon: 0.7, Rows: "release"}, {Epsilon: 0.31, Rows: "release"}}, "eps add up"},
		{"all rows and a part", []dp.Charge{{Epsilon: 0.1}, {Epsilon: 0.9, Rows: "tuning"}}, "eps add up"},
		{"negative", []dp.Charge{{Epsilon: -1}, {Epsilon: 2}}, "finite >= 0"},
		{"NaN", []dp.Charge{{Epsilon: math.NaN()}}, "finite >= 0"},
		{"Inf delta", []dp.Charge{{Delta: math.Inf(1)}}, "finite >= 0"},
	} {
		err := claim.Covers(tc.ledger)
		if tc.want == "" && err != nil || tc.want != "" && (!errors.Is(err, dp.ErrBudget) || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestValidateRange checks the budget's range and its messages: eps
// finite in [MinEpsilon, MaxEpsilon], delta in [0, 1), each refusal naming
// its reason.
func TestValidateRange(t *testing.T) {
	for _, tc := range []struct {
		b    dp.Budget
		want string
	}{
		{dp.Budget{Epsilon: dp.MinEpsilon}, ""},
		{dp.Budget{Epsilon: dp.MaxEpsilon, Delta: 0.5}, ""},
		{dp.Budget{Epsilon: 1e300}, "above 100"},
		{dp.Budget{Epsilon: math.Nextafter(dp.MaxEpsilon, 1e3)}, "no protection"},
		{dp.Budget{Epsilon: 1e-300}, "below 2^-50"},
		{dp.Budget{Epsilon: 0}, "want finite > 0"},
		{dp.Budget{Epsilon: -1}, "want finite > 0"},
		{dp.Budget{Epsilon: math.NaN()}, "want finite > 0"},
		{dp.Budget{Epsilon: math.Inf(1)}, "want finite > 0"},
		{dp.Budget{Epsilon: 1, Delta: -1e-9}, "delta"},
		{dp.Budget{Epsilon: 1, Delta: 1}, "delta"},
		{dp.Budget{Epsilon: 1, Delta: math.NaN()}, "delta"},
	} {
		err := tc.b.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (!errors.Is(err, dp.ErrBudget) || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.b, err, tc.want)
		}
	}
}

// TestCheckRows checks the refusal of delta >= 1/n, its message (the
// reason and a value to choose), and the warning above 1/(10 n).
func TestCheckRows(t *testing.T) {
	const n = 569
	for _, tc := range []struct {
		delta      float64
		refuse     bool
		warn       bool
		unit, want string
	}{
		{0, false, false, "training row", ""},
		{1e-6, false, false, "training row", ""},
		{1.0 / (10 * n), false, false, "training row", ""},
		{2e-4, false, true, "training row", "0.11 of them in expectation"},
		{math.Nextafter(1.0/n, 0), false, true, "training row", "Dwork & Roth"},
		{math.Nextafter(1.0/n, 1), true, false, "training row", "1/n = 1/569 (training rows): a release could publish a training row outright"},
		{0.5, true, false, "training privacy ID", "delta = 0.5 >= 1/n = 1/569 (training privacy IDs)"},
	} {
		b := dp.Budget{Epsilon: 1, Delta: tc.delta}
		err := b.CheckRows(n, tc.unit)
		warn := b.DeltaWarning(n, tc.unit)
		if (err != nil) != tc.refuse || tc.refuse && (!errors.Is(err, dp.ErrBudget) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "e.g. 1/n^2 = 3.1e-06 or 1e-6")) {
			t.Errorf("delta %v: CheckRows %v, want refused %v naming %q", tc.delta, err, tc.refuse, tc.want)
		}
		if (warn != "") != tc.warn || tc.warn && !strings.Contains(warn, tc.want) {
			t.Errorf("delta %v: warning %q, want %v naming %q", tc.delta, warn, tc.warn, tc.want)
		}
	}
	if err := (dp.Budget{Epsilon: 1, Delta: 0.9}).CheckRows(0, "training row"); err != nil {
		t.Errorf("no rows: %v, want no check", err)
	}
}

// TestZeros checks PositiveZeros and NegativeZero: a -0 is found and
// written +0, every other value is kept bit for bit.
func TestZeros(t *testing.T) {
	neg := math.Copysign(0, -1)
	w := []float64{1, neg, -2, 0, neg, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64}
	want := []float64{1, 0, -2, 0, 0, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64}
	if i := dp.NegativeZero(w); i != 1 {
		t.Errorf("NegativeZero = %d, want 1", i)
	}
	h := dp.WeightsSHA256(w)
	dp.PositiveZeros(w)
	for i := range w {
		if math.Float64bits(w[i]) != math.Float64bits(want[i]) {
			t.Errorf("entry %d is %v (bits %#x), want %v", i, w[i], math.Float64bits(w[i]), want[i])
		}
	}
	if dp.NegativeZero(w) != -1 || dp.WeightsSHA256(w) == h {
		t.Errorf("after PositiveZeros: a -0 at %d, hash unchanged %v", dp.NegativeZero(w), dp.WeightsSHA256(w) == h)
	}
}
