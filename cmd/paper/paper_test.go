package paper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/experiments"
	"github.com/stabpriv/stabpriv/experiments/protocol"
)

// TestUsageErrors: each command refuses a bad command line with a usage
// error naming the flag, before reading any data.
func TestUsageErrors(t *testing.T) {
	out := t.TempDir()
	for _, tc := range []struct {
		run  func(context.Context, []string, io.Writer, io.Writer) error
		args []string
		want string
	}{
		{Sweep, []string{"--dataset", "csv", "--out", out}, "--dataset csv needs --data FILE"},
		{Sweep, []string{"--dataset", "adult", "--splits", "0", "--out", out}, "--splits 0"},
		{Sweep, []string{"--dataset", "adult", "--mechanism", "stump", "--out", out}, "sweep sweeps lambda"},
		{FeatSel, []string{"--dataset", "adult", "--mechanism", "objective", "--l1-ratio", "0.5", "--out", out}, "featsel releases trained weights"},
		{FeatSel, []string{"--dataset", "adult", "--rate", "1", "--data-dir", out, "--l1-ratio", "0.5", "--out", out}, "--rate 1"},
	} {
		err := tc.run(context.Background(), tc.args, io.Discard, io.Discard)
		if !errors.Is(err, runflags.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
}

// TestAsUsage: a refusal of the sweep's settings or of the protocol's (a
// value the flag checks let through) is a usage error (exit 2); a missing
// data set is not.
func TestAsUsage(t *testing.T) {
	for _, tc := range []struct {
		err   error
		usage bool
	}{
		{fmt.Errorf("%w: splits = 0", experiments.ErrConfig), true},
		{fmt.Errorf("%w: test fraction 1", protocol.ErrConfig), true},
		{fmt.Errorf("%w: no gene_all", protocol.ErrNoData), false},
	} {
		if got := asUsage(tc.err); errors.Is(got, runflags.ErrUsage) != tc.usage || !errors.Is(got, tc.err) {
			t.Errorf("asUsage(%v) = %v, want a usage error: %v", tc.err, got, tc.usage)
		}
	}
}
