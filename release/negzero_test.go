package release

import (
	"math"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/trainer"
)

// negZeroSource is a caller-supplied source whose every draw makes the
// coordinate -0.
type negZeroSource struct{ perturb.Source }

func (negZeroSource) AddGammaNorm(w []float64, _, _ float64) error {
	for i := range w {
		w[i] = math.Copysign(0, -1)
	}
	return nil
}

func (negZeroSource) Kind() string { return "-0" }

// TestReleasesWritePositiveZeros checks that whatever a source writes, a
// release publishes no -0 and hashes the weights it publishes: Weights,
// OneVsRest and finish (every method's release) write every zero +0.
func TestReleasesWritePositiveZeros(t *testing.T) {
	src := negZeroSource{perturb.Seeded(1)}
	check := func(name string, w []float64, hash string) {
		t.Helper()
		if i := dp.NegativeZero(w); i >= 0 || hash != dp.WeightsSHA256(w) {
			t.Errorf("%s: -0 at %d, hash of the published weights %v", name, i, hash == dp.WeightsSHA256(w))
		}
	}
	m, run := testModel(1, 4)
	out, cert, err := Weights(m, run, testSens, Config{Mechanism: perturb.Gamma, Epsilon: 1, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	check("Weights", out.W, cert.WeightsSHA256)
	models, runs := make([]*trainer.Model, 2), make([]*trainer.Run, 2)
	for i := range models {
		models[i], runs[i] = testModel(1, 4)
	}
	outs, certs, err := OneVsRest(models, runs, []perturb.Sensitivity{testSens, testSens}, Config{Mechanism: perturb.Gamma, Epsilon: 1, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	for i := range outs {
		check("OneVsRest", outs[i].W, certs[i].WeightsSHA256)
	}
	neg := math.Copysign(0, -1)
	o := finish(&Outcome{Model: &trainer.Model{W: []float64{neg, 1, neg}}, Certificate: &Certificate{}}, src)
	check("finish", o.Model.W, o.Certificate.WeightsSHA256)
}
