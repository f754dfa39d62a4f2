package stabbeam

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/stabpriv/stabpriv/datasets/placement"
	"github.com/stabpriv/stabpriv/modelfile"
	"github.com/stabpriv/stabpriv/partition"
)

// combineFn collects the partitions' results into one value: the one
// combine of the pipeline, whose output the release averages in partition
// order (so the sum does not depend on the order results arrive in).
type combineFn struct{}

func (combineFn) CreateAccumulator() results { return results{} }
func (combineFn) AddInput(a results, b []byte) results {
	a.Items = append(a.Items, b)
	return a
}
func (combineFn) MergeAccumulators(a, b results) results {
	a.Items = append(a.Items, b.Items...)
	return a
}
func (combineFn) ExtractOutput(a results) results { return a }

// releaseFn averages the partitions' weights and adds the noise once
// (partition.Plan.Release), and emits the model file's bytes under the one
// key 0: the draw is an element of a PCollection, which the runner commits
// before the sink reads it (see Build).
type releaseFn struct {
	Cfg    Config   `json:"cfg"`
	Header []string `json:"header"`
}

// releases counts the draws of the release step (a retried bundle that
// draws again counts twice; only one draw is ever committed).
var releases = beam.NewCounter("stabpriv", "releases-drawn")

func (f *releaseFn) ProcessElement(ctx context.Context, rs results, total Count, ids placement.IDCounts, emit func(int, []byte)) error {
	plan, err := f.Cfg.Plan(f.Header)
	if err != nil {
		return err
	}
	parts := make([]partition.Result, len(rs.Items))
	for i, b := range rs.Items {
		if err := json.Unmarshal(b, &parts[i]); err != nil {
			return fmt.Errorf("stabbeam: result of a partition: %w", err)
		}
	}
	var rel *modelfile.Released
	if f.Cfg.PrivacyID != "" {
		rel, err = plan.ReleaseIDs(ctx, parts, ids)
	} else {
		rel, err = plan.Release(ctx, parts, total.shards())
	}
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := rel.Write(&buf); err != nil {
		return err
	}
	releases.Inc(ctx, 1)
	emit(0, buf.Bytes())
	return nil
}

// sinkFn writes the committed release, the one value of key 0, to the
// model file: whole or not at all (a local file is renamed into place, an
// object is committed when its writer closes), and idempotent, since a
// retried bundle of the sink writes the same committed bytes again. More
// than one release under the key (which a runner that commits a bundle's
// output once never produces) is refused, and nothing is written.
type sinkFn struct {
	Out string `json:"out"`
	// Force replaces a file at Out (--force); without it the sink never
	// replaces one (writeFile).
	Force bool `json:"force"`
}

func (f *sinkFn) ProcessElement(ctx context.Context, _ int, files func(*[]byte) bool) error {
	var file, other []byte
	if !files(&file) {
		return fmt.Errorf("stabbeam: no release to write")
	}
	if files(&other) {
		return fmt.Errorf("stabbeam: more than one release reached the sink; nothing was written")
	}
	if err := writeFile(ctx, f.Out, file, f.Force); err != nil {
		return err
	}
	if afterSinkWrite != nil {
		return afterSinkWrite(f.Out)
	}
	return nil
}

// afterSinkWrite, when set (by the tests), runs after the sink has written
// the model file: an error there is a bundle that fails after its side
// effect, which a runner retries.
var afterSinkWrite func(out string) error
