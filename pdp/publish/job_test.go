package publish

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestNewJobSettingsErrors: a bad setting is a *SettingsError naming the
// flag, found before anything is read, and CheckOut is called with the
// files the run writes (the summary's among them when one is asked for).
func TestNewJobSettingsErrors(t *testing.T) {
	base := Options{Loss: "logistic", Lambda: 1e-3, Epsilon: 1, Delta: 1e-6, Mechanism: DefaultMechanism,
		Standardize: "none", Bias: "true", Kappa: 1, Top: 10}
	for _, tc := range []struct {
		edit func(*Options)
		want string
	}{
		{func(o *Options) { o.Lambda = -1 }, "--lambda -1"},
		{func(o *Options) { o.Loss = "hinge" }, "--loss"},
		{func(o *Options) { o.Set = map[string]bool{"model": true, "lambda": true} }, "--lambda with --model"},
		{func(o *Options) { o.Set = map[string]bool{"publish-delta": true} }, "applies with --publish-epsilon"},
	} {
		o := base
		tc.edit(&o)
		_, err := NewJob(o)
		var se *SettingsError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v, want a *SettingsError with %q", err, tc.want)
		}
	}
	var files []string
	o := base
	o.Set = map[string]bool{"publish-epsilon": true}
	o.Summary = SummaryOptions{Epsilon: 1, Beta: DefaultBeta, Levels: "0.1"}
	o.CheckOut = func(f []string) error { files = f; return nil }
	if _, err := NewJob(o); err != nil {
		t.Fatal(err)
	}
	if len(files) != len(ReportFiles)+1 || files[len(files)-1] != SummaryFile {
		t.Errorf("CheckOut got %v, want %v and %s", files, ReportFiles, SummaryFile)
	}
}

// TestRunSimulated runs a small simulated analysis of the embedded data
// and prints it; nothing is written.
func TestRunSimulated(t *testing.T) {
	j, err := NewJob(Options{Loss: "logistic", Lambda: 1e-2, Epsilon: 1, Delta: 1e-6, Mechanism: DefaultMechanism,
		Standardize: "none", Bias: "true", Kappa: 1, Top: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	out, err := j.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	out.Print(&b, "DIR")
	if s := b.String(); !strings.Contains(s, "per-instance eps over the training rows") || !strings.Contains(s, "written to DIR") {
		t.Errorf("report:\n%s", s)
	}
}
