package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/stabpriv/stabpriv/accountant"
	"github.com/stabpriv/stabpriv/dp"
)

// accountHelp is the help of the account command, before its flags.
const accountHelp = "Usage: stabpriv account --sample-rate q --noise-multiplier s --steps T --delta d [--json]\n" +
	"       stabpriv account --sample-rate q --epsilon E --steps T --delta d [--json]\n\n" +
	"Accounts for T steps of the Poisson-subsampled Gaussian mechanism (DP-SGD: every row in\n" +
	"a step's batch with probability q, per-example clipping to C, Gaussian noise of standard\n" +
	"deviation s C on the sum): its Renyi DP at the orders 1.1 ... 1024 (Mironov, Talwar &\n" +
	"Zhang 2019), converted to (eps, delta) at the best order. It prints eps and that order,\n" +
	"or with --epsilon the smallest noise multiplier s that meets (E, delta). The neighbours\n" +
	"are add/remove-one; the replace-one budget (2 eps, (1 + e^eps) delta) is printed too\n" +
	"(when that delta is below 1).\n" +
	"--conversion classical gives eps = rdp + log(1/delta)/(alpha-1), the number TF Privacy\n" +
	"reports; the default, improved (Balle et al. 2020, Theorem 21), is always lower.\n" +
	"Nothing is read or written but standard output; a bad value exits with status 2."

// accountReport is what account prints with --json.
type accountReport struct {
	SampleRate      float64    `json:"sample_rate"`
	NoiseMultiplier float64    `json:"noise_multiplier"`
	Steps           int        `json:"steps"`
	Epsilon         float64    `json:"epsilon"`
	Delta           float64    `json:"delta"`
	Order           float64    `json:"order"`
	Conversion      string     `json:"conversion"`
	Neighbours      string     `json:"neighbours"`
	TargetEpsilon   float64    `json:"target_epsilon,omitempty"`
	ReplaceOne      *dp.Budget `json:"replace_one,omitempty"` // nil when its delta is 1 or more
	ExcludedOrders  []float64  `json:"excluded_orders,omitempty"`
}

// runAccount is the account command: the privacy of the
// Poisson-subsampled Gaussian mechanism over many steps, or the noise for
// a target budget.
func runAccount(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("account", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var (
		q, sigma, eps, delta float64
		steps                int
		conversion           string
		asJSON               bool
	)
	fs.Float64Var(&q, "sample-rate", 0, "probability `q` in [0, 1] that a row is in a step's batch (expected batch size / rows; > 0 with --epsilon)")
	fs.Float64Var(&sigma, "noise-multiplier", 0, "noise standard deviation over the clipping norm, `s` > 0 (prints eps)")
	fs.Float64Var(&eps, "epsilon", 0, "target `eps` > 0 (prints the smallest noise multiplier that meets it, instead of eps)")
	fs.IntVar(&steps, "steps", 0, "number `T` >= 1 of steps")
	fs.Float64Var(&delta, "delta", 0, "`delta` in (0, 1)")
	fs.StringVar(&conversion, "conversion", accountant.Improved.String(), "RDP to (eps, delta): improved (Balle et al. 2020) or classical (Mironov 2017)")
	fs.BoolVar(&asJSON, "json", false, "print one JSON object (sample_rate, noise_multiplier, steps, epsilon, delta, order, ...)")
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
	r := accountReport{SampleRate: q, Steps: steps, Delta: delta, Conversion: c.String(), Neighbours: "add/remove one"}
	var g accountant.Guarantee
	if set["epsilon"] {
		r.TargetEpsilon = eps
		sigma, g, err = accountant.NoiseMultiplier(q, steps, dp.Budget{Epsilon: eps, Delta: delta}, c, nil)
	} else {
		g, err = accountant.SampledGaussian{SampleRate: q, NoiseMultiplier: sigma, Steps: steps}.Epsilon(delta, c, nil)
	}
	if err != nil {
		return usagef("%w", err)
	}
	r.NoiseMultiplier, r.Epsilon, r.Order, r.ExcludedOrders = sigma, g.Epsilon, g.Order, g.Excluded
	if b := g.ReplaceOne(); b.Delta < 1 {
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

// printAccount writes the report r in words.
func printAccount(w io.Writer, r accountReport) {
	if r.TargetEpsilon > 0 {
		fmt.Fprintf(w, "noise multiplier = %.6g: the smallest that meets eps = %g at delta = %g\n", r.NoiseMultiplier, r.TargetEpsilon, r.Delta)
	}
	fmt.Fprintf(w, "eps = %.6g at delta = %g (RDP order %g, %s conversion)\n", r.Epsilon, r.Delta, r.Order, r.Conversion)
	fmt.Fprintf(w, "for %d steps of the Poisson-subsampled Gaussian, sample rate %g, noise multiplier %.6g; add/remove-one neighbours\n",
		r.Steps, r.SampleRate, r.NoiseMultiplier)
	if b := r.ReplaceOne; b != nil {
		fmt.Fprintf(w, "replace-one neighbours (group privacy): eps = %.6g, delta = %.3g\n", b.Epsilon, b.Delta)
	} else {
		fmt.Fprintf(w, "replace-one neighbours: no guarantee, (1 + e^eps) delta >= 1\n")
	}
	if len(r.ExcludedOrders) > 0 {
		fmt.Fprintf(w, "orders left out (no finite RDP): %v\n", r.ExcludedOrders)
	}
}
