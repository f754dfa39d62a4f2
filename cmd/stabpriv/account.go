package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/accountant"
	"github.com/stabpriv/stabpriv/dp"
)

// accountHelp is the help of the account command, before its flags.
const accountHelp = "Usage: stabpriv account --sample-rate q --noise-multiplier s --steps T --delta d [--json]\n" +
	"       stabpriv account --sample-rate q --epsilon E --steps T --delta d [--json]\n\n" +
	"Accounts for T steps of the Poisson-subsampled Gaussian mechanism (DP-SGD: every row in\n" +
	"a step's batch with probability q, per-example clipping to C, Gaussian noise of standard\n" +
	"deviation s C on the sum) by two accountants, and claims the tighter (the smaller eps, or\n" +
	"with --epsilon the smaller noise multiplier s that meets (E, delta)):\n" +
	"  pld: the privacy loss distribution of one step, on a grid of --pld-interval nats\n" +
	"       (connect-the-dots, an upper bound), composed by FFT, both directions of\n" +
	"       add/remove; its truncated masses and a rounding allowance count in delta;\n" +
	"  rdp: Renyi DP at the orders 1.1 ... 1024 (Mironov, Talwar & Zhang 2019), converted\n" +
	"       to (eps, delta) at the best order; --conversion classical gives\n" +
	"       eps = rdp + log(1/delta)/(alpha-1), the number TF Privacy reports, the default\n" +
	"       improved (Balle et al. 2020, Theorem 21) is always lower.\n" +
	"--accountant pld or rdp runs one; when one of the two has no bound, the other's is the\n" +
	"claim and the reason is printed. The neighbours are add/remove-one; the replace-one\n" +
	"budget (2 eps, (1 + e^eps) delta) is printed too (when that delta is below 1).\n" +
	"Nothing is read or written but standard output; a bad value exits with status 2."

// accountReport is what account prints with --json. Epsilon (and with
// --epsilon NoiseMultiplier) is the claim, by Accountant; Order and
// Conversion are the RDP accountant's, PLD the PLD accountant's details;
// PLDError or RDPError says why one of the two gave no bound.
type accountReport struct {
	SampleRate      float64    `json:"sample_rate"`
	NoiseMultiplier float64    `json:"noise_multiplier"`
	Steps           int        `json:"steps"`
	Epsilon         float64    `json:"epsilon"`
	Delta           float64    `json:"delta"`
	Accountant      string     `json:"accountant"`
	Order           float64    `json:"order,omitempty"`
	Conversion      string     `json:"conversion,omitempty"`
	RDPEpsilon      *float64   `json:"rdp_epsilon,omitempty"`
	RDPNoise        float64    `json:"rdp_noise_multiplier,omitempty"`
	RDPError        string     `json:"rdp_error,omitempty"`
	PLD             *pldReport `json:"pld,omitempty"`
	PLDError        string     `json:"pld_error,omitempty"`
	Neighbours      string     `json:"neighbours"`
	TargetEpsilon   float64    `json:"target_epsilon,omitempty"`
	ReplaceOne      *dp.Budget `json:"replace_one,omitempty"` // nil when its delta is 1 or more
	ExcludedOrders  []float64  `json:"excluded_orders,omitempty"`
}

// pldReport is the PLD accountant's part of an accountReport.
type pldReport struct {
	Epsilon         float64 `json:"epsilon"`
	NoiseMultiplier float64 `json:"noise_multiplier"`
	Remove          float64 `json:"remove_epsilon"`
	Add             float64 `json:"add_epsilon"`
	Interval        float64 `json:"interval"`
	Tail            float64 `json:"tail"`
	TailDelta       float64 `json:"tail_delta"`
	RoundingDelta   float64 `json:"rounding_delta"`
}

// runAccount is the account command: the privacy of the
// Poisson-subsampled Gaussian mechanism over many steps, or the noise for
// a target budget, by the PLD and RDP accountants.
func runAccount(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("account", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var (
		q, sigma, eps, delta, interval float64
		steps                          int
		conversion, which              string
		asJSON                         bool
	)
	fs.Float64Var(&q, "sample-rate", 0, "probability `q` in [0, 1] that a row is in a step's batch (expected batch size / rows; > 0 with --epsilon)")
	fs.Float64Var(&sigma, "noise-multiplier", 0, "noise standard deviation over the clipping norm, `s` > 0 (prints eps)")
	fs.Float64Var(&eps, "epsilon", 0, "target `eps` > 0 (prints the smallest noise multiplier that meets it, instead of eps)")
	fs.IntVar(&steps, "steps", 0, "number `T` >= 1 of steps")
	fs.Float64Var(&delta, "delta", 0, "`delta` in (0, 1)")
	fs.StringVar(&which, "accountant", "both", "`pld`, rdp, or both (the tighter is the claim)")
	fs.Float64Var(&interval, "pld-interval", accountant.DefaultPLDInterval, "the PLD accountant's grid interval in nats, `h` > 0 (coarser: faster, looser)")
	fs.StringVar(&conversion, "conversion", accountant.Improved.String(), "RDP to (eps, delta): improved (Balle et al. 2020) or classical (Mironov 2017)")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object (sample_rate, noise_multiplier, steps, epsilon, delta, accountant, ...)")
	set, err := parseFlags(fs, args, stderr, accountHelp)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if set["noise-multiplier"] && set["epsilon"] {
		return usagef("--noise-multiplier and --epsilon exclude each other: give s to get eps, or E to get s")
	}
	var missing []string
	for _, name := range []string{"sample-rate", "steps", "delta"} {
		if !set[name] {
			missing = append(missing, "--"+name)
		}
	}
	if !set["noise-multiplier"] && !set["epsilon"] {
		missing = append(missing, "--noise-multiplier (for eps) or --epsilon (for the noise)")
	}
	if len(missing) > 0 {
		return usagef("missing %s (see stabpriv help account)", strings.Join(missing, ", "))
	}
	c, err := accountant.ParseConversion(conversion)
	if err != nil {
		return usagef("--conversion: %w", err)
	}
	useRDP, usePLD := which == "both" || which == "rdp", which == "both" || which == "pld"
	if !useRDP && !usePLD {
		return usagef("--accountant %q, want pld, rdp or both", which)
	}
	pld := accountant.PLD{Interval: interval}
	if !(interval > 0) || math.IsInf(interval, 1) {
		return usagef("--pld-interval %v, want a finite interval > 0 (nats)", interval)
	}
	r := accountReport{SampleRate: q, Steps: steps, Delta: delta, Neighbours: "add/remove one", NoiseMultiplier: sigma}
	if set["epsilon"] {
		r.TargetEpsilon = eps
	}
	target := dp.Budget{Epsilon: eps, Delta: delta}
	var rdp accountant.Guarantee
	var rdpErr error
	if useRDP {
		if set["epsilon"] {
			r.RDPNoise, rdp, rdpErr = accountant.NoiseMultiplier(q, steps, target, c, nil)
		} else {
			rdp, rdpErr = accountant.SampledGaussian{SampleRate: q, NoiseMultiplier: sigma, Steps: steps}.Epsilon(delta, c, nil)
		}
		switch {
		case rdpErr != nil && !usePLD:
			return usagef("%w", rdpErr)
		case rdpErr != nil:
			// The PLD may still give the claim; the RDP's reason is
			// printed beside it.
			r.RDPError, r.RDPNoise = rdpErr.Error(), 0
		default:
			e := rdp.Epsilon
			r.RDPEpsilon, r.Order, r.Conversion, r.ExcludedOrders = &e, rdp.Order, c.String(), rdp.Excluded
			r.Accountant, r.Epsilon = "rdp", e
			if set["epsilon"] {
				r.NoiseMultiplier = r.RDPNoise
			}
		}
	}
	if usePLD {
		var g accountant.PLDGuarantee
		s := sigma
		if set["epsilon"] {
			s, g, err = accountant.NoiseMultiplierPLD(q, steps, target, pld)
		} else {
			g, err = pld.Epsilon(accountant.SampledGaussian{SampleRate: q, NoiseMultiplier: sigma, Steps: steps}, delta)
		}
		switch {
		case err != nil && rdpErr != nil:
			return usagef("%w", rdpErr) // neither has a bound: the RDP's reason
		case err != nil && !useRDP:
			return usagef("%w", err)
		case err != nil:
			// RDP keeps the claim; the PLD's reason is printed.
			r.PLDError = err.Error()
		default:
			r.PLD = &pldReport{Epsilon: g.Epsilon, NoiseMultiplier: s, Remove: g.Remove, Add: g.Add, Interval: g.PLD.Interval,
				Tail: g.PLD.Tail, TailDelta: g.TailDelta, RoundingDelta: g.RoundingDelta}
			if !useRDP || rdpErr != nil || set["epsilon"] && s < r.NoiseMultiplier || !set["epsilon"] && g.Epsilon < r.Epsilon {
				r.Accountant, r.Epsilon, r.NoiseMultiplier = "pld", g.Epsilon, s
			}
		}
	}
	if b := (accountant.Guarantee{Epsilon: r.Epsilon, Delta: delta}).ReplaceOne(); b.Delta < 1 {
		r.ReplaceOne = &b
	}
	if asJSON {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	printAccount(stdout, r)
	return nil
}

// printAccount writes the report r in words: the claim first, then the
// other accountant's number. Every number it computed is rounded up (up):
// a printed eps or delta is never below the accountant's bound, and a
// printed noise multiplier, copied into a run, still meets the target.
func printAccount(w io.Writer, r accountReport) {
	if r.TargetEpsilon > 0 {
		fmt.Fprintf(w, "noise multiplier = %s: the smallest that meets eps = %g at delta = %g (%s)\n", up(r.NoiseMultiplier, 6), r.TargetEpsilon, r.Delta, strings.ToUpper(r.Accountant))
	}
	pldLine := func(prefix string) {
		if p := r.PLD; p != nil {
			fmt.Fprintf(w, "%seps = %s at delta = %g (PLD, grid interval %g: remove %s, add %s; delta includes %s for truncation and rounding)\n",
				prefix, up(p.Epsilon, 6), r.Delta, p.Interval, up(p.Remove, 6), up(p.Add, 6), up(p.TailDelta+p.RoundingDelta, 2))
		}
	}
	rdpLine := func(prefix string) {
		if r.RDPEpsilon != nil {
			fmt.Fprintf(w, "%seps = %s at delta = %g (RDP order %g, %s conversion)\n", prefix, up(*r.RDPEpsilon, 6), r.Delta, r.Order, r.Conversion)
		}
	}
	switch {
	case r.Accountant == "pld" && r.TargetEpsilon > 0:
		pldLine("")
		if r.RDPEpsilon != nil {
			fmt.Fprintf(w, "RDP needs noise multiplier %s for it\n", up(r.RDPNoise, 6))
		}
	case r.Accountant == "pld":
		pldLine("")
		rdpLine("also: ")
	case r.TargetEpsilon > 0:
		rdpLine("")
		if p := r.PLD; p != nil {
			fmt.Fprintf(w, "PLD needs noise multiplier %s for it\n", up(p.NoiseMultiplier, 6))
		}
	default:
		rdpLine("")
		pldLine("also: ")
	}
	if r.PLDError != "" {
		fmt.Fprintf(w, "PLD: no bound (%s)\n", r.PLDError)
	}
	if r.RDPError != "" {
		fmt.Fprintf(w, "RDP: no bound (%s)\n", r.RDPError)
	}
	fmt.Fprintf(w, "for %d steps of the Poisson-subsampled Gaussian, sample rate %g, noise multiplier %s; add/remove-one neighbours\n",
		r.Steps, r.SampleRate, up(r.NoiseMultiplier, 6))
	if b := r.ReplaceOne; b != nil {
		fmt.Fprintf(w, "replace-one neighbours (group privacy): eps = %s, delta = %s\n", up(b.Epsilon, 6), up(b.Delta, 3))
	} else {
		fmt.Fprintf(w, "replace-one neighbours: no guarantee, (1 + e^eps) delta >= 1\n")
	}
	if len(r.ExcludedOrders) > 0 {
		fmt.Fprintf(w, "orders left out (no finite RDP): %v\n", r.ExcludedOrders)
	}
}

// up returns x with digits significant digits (as %.*g prints it), rounded
// toward +Inf instead of to the nearest: never below x.
func up(x float64, digits int) string {
	s := strconv.FormatFloat(x, 'g', digits, 64)
	for range 2 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v < x) || math.IsInf(v, 0) {
			return s
		}
		// s is x rounded down: one unit of its last digit more.
		e := strconv.FormatFloat(v, 'e', digits-1, 64)
		exp, err := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
		if err != nil {
			return s
		}
		s = strconv.FormatFloat(v+math.Pow10(exp-digits+1), 'g', digits, 64)
	}
	return s
}
