package stability

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stabpriv/stabpriv/trainer"
)

// TestReportPublishesNoDataStatistics checks that a report depends on the
// constants of a run only: records that differ only in their Stats (passes
// done, gradient norm, convergence, objective, clipped rows, time) give the
// same report, for a tolerance run (which every route refuses, whether it
// converged or not) and for a full-batch run of route 1 (which no longer
// asks whether the run converged). A report is written into private model
// files; the certificate withholds these statistics, and the report must
// not publish them, nor let them decide whether a release happens.
func TestReportPublishesNoDataStatistics(t *testing.T) {
	stats := []trainer.Stats{
		{PassesDone: 3, GradNorm: 4e-4, Converged: true, Objective: 0.3, ClippedRows: 2, Duration: time.Second},
		{PassesDone: 8, GradNorm: 7.07e-3, Converged: false, Objective: 0.5},
		{PassesDone: 6, GradNorm: 9e-4, Converged: true, Objective: 0.1, ClippedRows: 40},
		{},
	}
	for _, c := range []struct {
		name string
		run  func() *trainer.Run
	}{
		{"tolerance", func() *trainer.Run {
			r := handRun()
			r.Lambda, r.Tolerance = 0.1, 1e-3
			return fullBatch(r, 8)
		}},
		{"full batch", func() *trainer.Run {
			r := handRun()
			r.Lambda = 0.1
			return fullBatch(r, 8)
		}},
	} {
		var first any
		for i, st := range stats {
			r := c.run()
			r.Stats = st
			rep, err := Analyze(r)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = v
				if c.name == "tolerance" && rep.Chosen != 0 {
					t.Errorf("tolerance run: route %v chosen, want none", rep.Chosen)
				}
				if e, _ := rep.Lookup(RouteERM); c.name == "full batch" && !e.Applies {
					t.Errorf("full-batch run: route 1 does not apply: %s", e.Reason)
				}
				continue
			}
			if !reflect.DeepEqual(first, v) {
				t.Errorf("%s: the report depends on the statistics %+v:\n%s", c.name, st, b)
			}
		}
	}
}
