package runflags

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/datasets/preprocess"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/partition"
	"github.com/stabpriv/stabpriv/private"
	"github.com/stabpriv/stabpriv/trainer"
)

// CheckEngine refuses --engine graph in a command built without the
// Gorgonia engine (graphLinked false: stabpriv and stabpriv-beam link it
// only when built with -tags graph), naming the tag that links it. Its
// error is a *UsageError.
func (f *Flags) CheckEngine(graphLinked bool) error {
	if f.Engine == trainer.Graph && !graphLinked {
		return usagef("--engine graph: this build has no Gorgonia engine; build the command with -tags graph")
	}
	return nil
}

// StandardizedOnRows reports whether a private run standardizes the
// features with statistics of the training rows (--standardize train):
// its certificate then covers the standardized rows, not the table.
func (r *Run) StandardizedOnRows() bool {
	return r.Options.Preprocess == preprocess.Standardize && r.Private()
}

// CheckPositive refuses --positive (a class name, "" when not given) with
// a loss that is not binary.
func (r *Run) CheckPositive(positive string) error {
	if l := r.Options.Trainer.Loss; l != nil && positive != "" && l.Task() != losses.Binary {
		return usagef("--positive applies to binary losses, not %s (%v)", l.Name(), l.Task())
	}
	return nil
}

// Partitioned reports whether the run is a partitioned fit: partitions
// P > 1 (--partitions), or a fit per privacy ID (with one partition or
// more).
func (r *Run) Partitioned(partitions int) bool {
	return partitions > 1 || r.Options.PrivacyID != ""
}

// Forecast is private.Forecast for the run: a warning when the budget
// cannot buy a useful model ("" when it can).
func (r *Run) Forecast(table *datasets.Table, shards []*datasets.Table, partitions int) string {
	return private.Forecast(table, shards, r.Schema, r.Budget, r.Options, partitions)
}

// Fit runs the fit the flags ask for: partitioned over the shards
// (partition.Fit) when Partitioned, else on table, which it takes over
// (private.FitInPlace: the caller keeps only its Columns and Source).
// Errors of settings that cannot make a run (IsSettingsError) are
// *UsageError.
func (r *Run) Fit(ctx context.Context, table *datasets.Table, shards []*datasets.Table, partitions int) (*modelfile.Released, error) {
	var rel *modelfile.Released
	var err error
	if r.Partitioned(partitions) {
		rel, err = partition.Fit(ctx, shards, r.Schema, r.Budget, r.Options, partitions)
	} else {
		rel, err = private.FitInPlace(ctx, table, r.Schema, r.Budget, r.Options)
	}
	if IsSettingsError(err) {
		return nil, &UsageError{Err: err}
	}
	return rel, err
}

// ReadData reads --data: one CSV file, or when partitioned (--partitions
// > 1 or --privacy-id) every file the glob matches (in name order), each
// a shard named by its path relative to the input root, as stabpriv-beam
// names them (placement.ReadShards). header, when not "", names the columns
// of files without a header row ("a,b,..."). A file the pattern matches
// that is not a CSV file at all (the model file of an earlier run written
// among the shards) is a usage error, found from its header line before
// any row is read; without a header row the first line is a data row, so
// it is not checked.
func ReadData(data, header string, partitioned bool) ([]*datasets.Table, error) {
	if !partitioned && strings.ContainsAny(data, "*?[") {
		if _, err := os.Stat(data); err != nil {
			return nil, usagef("--data %q looks like a glob: shards are read with --partitions P > 1", data)
		}
	}
	files, _ := filepath.Glob(filepath.Clean(data))
	if header != "" {
		files = nil
	}
	for _, f := range files {
		if err := partition.CheckShardFile(f); err != nil {
			return nil, usagef("--data %q: %w", data, err)
		}
	}
	var names []string
	if header != "" {
		names = strings.Split(header, ",")
	}
	if partitioned {
		shards, err := placement.ReadShards(data, names)
		if err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
		return shards, nil
	}
	t, err := datasets.ReadTableFileHeader(data, names)
	if err != nil {
		return nil, err
	}
	return []*datasets.Table{t}, nil
}
