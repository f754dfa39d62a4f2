package stability

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestReportPublishesNoDataStatistics checks that a report on a run whose
// tolerance chose the stopping pass does not depend on what the data
// decided: two runs that stopped after different numbers of passes, with
// different gradient norms, give the same report. (A report is written
// into private model files; the certificate withholds these statistics, and
// the report must not publish them either.)
func TestReportPublishesNoDataStatistics(t *testing.T) {
	run := func(done int, grad float64, converged bool) []byte {
		r := handRun()
		r.Lambda, r.Passes, r.Stats.PassesDone, r.Tolerance = 0.1, 8, done, 1e-3
		r.Stats.GradNorm, r.Stats.Converged = grad, converged
		fillSteps(r)
		rep, err := Analyze(r)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range []struct {
		name      string
		converged bool
	}{{"converged", true}, {"not converged", false}} {
		a, b := run(3, 4e-4, c.converged), run(8, 7.07e-3, c.converged)
		if c.converged {
			b = run(6, 9e-4, true)
		}
		var ra, rb any
		if err := json.Unmarshal(a, &ra); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &rb); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ra, rb) {
			t.Errorf("%s: the report depends on the passes done or the gradient norm:\n%s\n%s", c.name, a, b)
		}
	}
}
