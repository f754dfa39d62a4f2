package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/private"
)

// tables caches the tables read from the prepared files (read once, each
// fit encodes its own copy of the schema).
var tables sync.Map // path, or path and the ignored columns -> *datasets.Table

// table returns the table of the file at path (the embedded data and its
// schema for ""), without the columns of ignore (comma-separated: train's
// --ignore, which reads no row).
func table(path, ignore string) (*datasets.Table, *datasets.Schema, error) {
	if path == "" {
		t, s, err := datasets.DefaultTable()
		return t, &s, err
	}
	key := path + "\x00" + ignore
	if t, ok := tables.Load(key); ok {
		return t.(*datasets.Table), nil, nil
	}
	t, err := datasets.ReadTableFile(path)
	if err != nil {
		return nil, nil, err
	}
	if ignore != "" {
		if t, err = t.Drop(strings.Split(ignore, ",")); err != nil {
			return nil, nil, fmt.Errorf("%s: --ignore %s: %w", path, ignore, err)
		}
	}
	tables.Store(key, t)
	return t, nil, nil
}

// outcome is what one fit gives the tables: the released and trained test
// accuracy (diagnostics, never published), the majority share of the test
// rows, the release's mechanism and lambda, and what certifying its model
// file gave.
type outcome struct {
	released, trained float64
	majority          float64
	mechanism         string
	lambda            float64
	rel               *modelfile.Released
	// certified is "ok" when the model file, written and read back,
	// passes modelfile.Verify (what `stabpriv certify` runs), the error
	// otherwise, and empty when the fit was not certified (job.certify
	// unset, or no certificate: --mechanism none).
	certified string
}

// parseRun checks the train flags of the data set and args (the shared
// flags of cmd/runflags, checked by the same code) and returns the run
// they make and the data set's table.
func parseRun(ds dataSet, args []string) (*runflags.Run, *datasets.Table, error) {
	var f runflags.Flags
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.Register(fs)
	// --data and --ignore are the train command's own flags (not
	// runflags'): the table is read, and its ignored columns dropped, here.
	var data, ignore string
	fs.StringVar(&data, "data", "", "")
	fs.StringVar(&ignore, "ignore", "", "")
	all := append(ds.args(), args...)
	if err := fs.Parse(all); err != nil {
		return nil, nil, fmt.Errorf("%v: %w", all, err)
	}
	set := make(map[string]bool)
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	t, defaults, err := table(ds.file, ignore)
	if err != nil {
		return nil, nil, err
	}
	run, err := f.Check(set, defaults)
	if err != nil {
		return nil, nil, fmt.Errorf("%v: %w", all, err)
	}
	return run, t, nil
}

// fitArgs runs what `stabpriv train` runs for the flags args on the data
// set's table (parseRun), with diagnostics.
func fitArgs(ctx context.Context, ds dataSet, args []string) (outcome, error) {
	run, t, err := parseRun(ds, args)
	if err != nil {
		return outcome{}, err
	}
	run.Options.Diagnostics = true
	rel, err := private.Fit(ctx, t, run.Schema, run.Budget, run.Options)
	if err != nil {
		return outcome{}, fmt.Errorf("%v: %w", append(ds.args(), args...), err)
	}
	d := rel.Diagnostics
	o := outcome{released: d.ReleasedTest.Value, trained: d.TrainedTest.Value, rel: rel}
	if c := rel.Certificate; c != nil {
		o.mechanism, o.lambda = string(c.Mechanism), c.Lambda
	}
	o.majority = d.MajorityTest.Value
	if d.MajorityTest.Rows == 0 {
		o.majority = majorityOfTest(t, run, rel)
	}
	return o, nil
}

// certify writes the release's model file to memory, reads it back and
// verifies it as `stabpriv certify` does: "ok", the error, or "" for a fit
// without a certificate. A seeded release verifies as consistent and not
// private (its noise seed is published); that is "ok" here.
func certify(rel *modelfile.Released) string {
	if rel == nil || rel.Certificate == nil {
		return ""
	}
	var buf bytes.Buffer
	if err := rel.Write(&buf); err != nil {
		return err.Error()
	}
	back, err := modelfile.Read(&buf)
	if err != nil {
		return err.Error()
	}
	if _, _, err := modelfile.Verify(back); err != nil {
		return err.Error()
	}
	return "ok"
}

// majorityOfTest returns the share of the most frequent declared class
// among the test rows of the fit's split (null rows counted in the
// denominator): for a fit whose diagnostics have no majority share.
func majorityOfTest(t *datasets.Table, run *runflags.Run, rel *modelfile.Released) float64 {
	task := losses.Binary
	if len(run.Schema.Classes) > 2 {
		task = losses.Multiclass
	}
	enc, err := t.Encode(run.Schema, task)
	if err != nil {
		return 0
	}
	_, test, err := enc.Split(run.Options.TestFrac, run.Options.Seed, false)
	if err != nil || len(test) == 0 {
		return 0
	}
	counts := map[float64]int{}
	best := 0
	for _, i := range test {
		if enc.Null[i] {
			continue
		}
		counts[enc.Y[i]]++
		best = max(best, counts[enc.Y[i]])
	}
	return float64(best) / float64(len(test))
}
