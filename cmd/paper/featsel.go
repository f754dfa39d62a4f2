package paper

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stabpriv/stabpriv/cmd/outfile"
	"github.com/stabpriv/stabpriv/experiments"
)

const featselHelp = `Usage: stabpriv featsel --dataset adult|lastfm|gene_all|csv --out DIR [flags]

Runs the paper's feature-selection experiments (Figures 3 and 5): trains as sweep does,
releases the weights once per eps (seeded noise), and keeps the features whose released
weight clears a threshold T: the dynamic T set from the noise scale (false-selection
rate --rate per feature) and each static T of --thresholds. The private selection is
compared with the non-private weights thresholded at the same T (F1), and with their
support.

Writes DIR/featsel.csv, DIR/fig3.png (F1 vs lambda per eps, dynamic T) and DIR/fig5.png
(F1 vs lambda per static T at eps = 1), and prints the mean F1 per lambda and eps.
`

// FeatSel is the featsel command of stabpriv: args are its flags;
// results go to stdout, logs and help to stderr.
func FeatSel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f Flags
	fs := newFlagSet("featsel", &f)
	fs.Float64Var(&f.Rate, "rate", experiments.DefaultRate, "dynamic threshold: probability q that a feature with zero true weights is selected")
	fs.StringVar(&f.ThresholdsFlag, "thresholds", "0.05,0.1,0.25,0.5,1", "comma-separated static thresholds T")
	if err := parsePaper(fs, &f, args, stderr, featselHelp); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if !(f.Rate > 0 && f.Rate < 1) {
		return usagef("--rate %v, want in (0, 1)", f.Rate)
	}
	start := time.Now()
	rows, err := experiments.FeatSel(ctx, experiments.FeatSelConfig{
		Protocol: f.Protocol, Splits: f.Splits, Lambdas: f.Lambdas, Epsilons: f.Epsilons,
		Mechanism: f.Mechanisms[0], Delta: f.Delta, L1Ratio: f.L1Ratio, Passes: f.Passes,
		Seed: f.Seed, Rate: f.Rate, Thresholds: f.Thresholds, Logger: f.logger(stderr),
	})
	if err != nil {
		return asUsage(err)
	}
	if err := experiments.WriteFeatSelTable(stdout, rows); err != nil {
		return err
	}
	paths, err := experiments.WriteFeatSel(f.Out, rows, f.Force)
	if err != nil {
		return outfile.Error("--out", err)
	}
	fmt.Fprintf(stdout, "\n%d rows in %.1f s; wrote %s\n", len(rows), time.Since(start).Seconds(), strings.Join(paths, ", "))
	return nil
}
