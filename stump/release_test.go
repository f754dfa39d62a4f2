package stump

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/losses"
	"github.com/stabpriv/stabpriv/perturb"
	"github.com/stabpriv/stabpriv/release"
	"github.com/stabpriv/stabpriv/trainer"
)

// TestStumpMethod releases a stump from rows [z, 1] (a null row among
// them), rebuilds its certificate from the published constants, checks
// the weights are in the public class and that weights outside it, a
// second release and rows without the bias are refused.
func TestStumpMethod(t *testing.T) {
	got, err := release.Lookup(perturb.Stump)
	if m := (method{}); err != nil || got != m || !release.TakesStumpRows(got) || m.SGD() || !m.Name().Pure() {
		t.Fatalf("Lookup(stump) = %v, %v: want the registered stump method", got, err)
	}
	m := method{}
	X := mat.NewDense(5, 3, []float64{
		-0.5, 0.2, 1,
		0.6, -0.1, 1,
		-0.7, 0.9, 1,
		0.8, 0.4, 1,
		0, 0, 0, // a null row
	})
	y := []float64{-1, 1, -1, 1, -1}
	cfg := trainer.Config{Loss: losses.Logistic{}, Classes: 2, Seed: 9}
	b := dp.Budget{Epsilon: 2, Delta: 1e-6}
	p, err := m.Prepare(context.Background(), release.Rows{X: X, Y: y, Config: cfg, Notes: []string{"note"}}, b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Release(context.Background(), perturb.Seeded(4))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Release(context.Background(), perturb.Seeded(4)); !errors.Is(err, release.ErrReleased) {
		t.Errorf("second release: %v", err)
	}
	pub := release.Public{Classes: 2, K: 1, D: 3, Notes: []string{"note"}}
	c := out.Certificate
	re, rep, err := m.Rebuild(c, pub)
	if err != nil || rep != nil {
		t.Fatal(err)
	}
	re.WeightsSHA256 = c.WeightsSHA256
	if !reflect.DeepEqual(re, c) {
		t.Errorf("rebuilt certificate differs:\n%+v\n%+v", re, c)
	}
	if err := m.CheckWeights(c, pub, out.Model.W); err != nil {
		t.Errorf("the released weights: %v", err)
	}
	for _, w := range [][]float64{{1, 0, 0.3}, {0.5, 0, 0}, {1, 1, 0}, {1, 0}} {
		if err := m.CheckWeights(c, pub, w); err == nil {
			t.Errorf("weights %v outside the class accepted", w)
		}
	}
	bad := mat.DenseCopyOf(X)
	bad.Set(0, 2, 0.7)
	if _, err := m.Prepare(context.Background(), release.Rows{X: bad, Y: y, Config: cfg}, b); !errors.Is(err, release.ErrConfig) {
		t.Errorf("rows without the bias 1: %v", err)
	}
	if err := m.CheckBudget(dp.Budget{Epsilon: 0}); err == nil {
		t.Errorf("eps 0 accepted")
	}
}

// TestMultiStumpMethod releases a multiclass stump from rows [z, 1] of 3
// classes (a null row among them): a model of 3 outputs whose weights are
// in the public class, a certificate rebuilt from the published constants,
// and refusals of forgeries (one weight changed, a -0), of a published
// shape that is not the release's, and of more classes than the cap.
func TestMultiStumpMethod(t *testing.T) {
	m := method{}
	X := mat.NewDense(7, 3, []float64{
		-0.8, 0.2, 1,
		-0.6, -0.1, 1,
		0.1, 0.9, 1,
		0.2, 0.4, 1,
		0.7, -0.3, 1,
		0.9, 0.5, 1,
		0, 0, 0, // a null row
	})
	y := []float64{0, 0, 1, 1, 2, 2, 0}
	cfg := trainer.Config{Loss: losses.Softmax{}, Classes: 3, Seed: 9}
	b := dp.Budget{Epsilon: 2}
	p, err := m.Prepare(context.Background(), release.Rows{X: X, Y: y, Config: cfg}, b)
	if err != nil {
		t.Fatal(err)
	}
	if k, d := p.Shape(); k != 3 || d != 3 {
		t.Errorf("shape %d x %d, want 3 x 3", k, d)
	}
	out, err := p.Release(context.Background(), perturb.Seeded(4))
	if err != nil {
		t.Fatal(err)
	}
	if md := out.Model; md.K != 3 || md.D != 3 || md.Task != losses.Multiclass || md.Loss != MultiLoss || len(md.W) != 9 {
		t.Fatalf("model %+v", md)
	}
	pub := release.Public{Classes: 3, K: 3, D: 3}
	c := out.Certificate
	if c.Dim != 9 {
		t.Errorf("certificate dimension %d, want 9", c.Dim)
	}
	re, _, err := m.Rebuild(c, pub)
	if err != nil {
		t.Fatal(err)
	}
	re.WeightsSHA256 = c.WeightsSHA256
	if !reflect.DeepEqual(re, c) {
		t.Errorf("rebuilt certificate differs:\n%+v\n%+v", re, c)
	}
	for _, bad := range []release.Public{{Classes: 3, K: 1, D: 3}, {Classes: 4, K: 3, D: 3}, {Classes: 2, K: 1, D: 3}} {
		if _, _, err := m.Rebuild(c, bad); err == nil {
			t.Errorf("rebuilt for %+v", bad)
		}
	}
	if err := m.CheckWeights(c, pub, out.Model.W); err != nil {
		t.Errorf("the released weights: %v", err)
	}
	for i := range out.Model.W {
		for _, v := range []float64{0.5, math.Copysign(0, -1)} {
			w := slices.Clone(out.Model.W)
			w[i] = v
			if err := m.CheckWeights(c, pub, w); !errors.Is(err, release.ErrConfig) {
				t.Errorf("weight %d set to %v accepted: %v", i, v, err)
			}
		}
	}
	if err := m.CheckWeights(c, pub, out.Model.W[:6]); !errors.Is(err, release.ErrConfig) {
		t.Errorf("6 weights for 3 x 3: %v", err)
	}
	if err := m.CheckConfig(trainer.Config{Loss: losses.Softmax{}, Classes: MaxClasses + 1}); !errors.Is(err, release.ErrConfig) {
		t.Errorf("%d classes: %v", MaxClasses+1, err)
	}
	if err := m.CheckConfig(trainer.Config{Loss: losses.Squared{}}); !errors.Is(err, release.ErrConfig) {
		t.Errorf("regression: %v", err)
	}
}

// TestStumpLegacyGrid: a certificate of the 63-point grid (a model file
// written before DefaultGrid became 1023) rebuilds on that grid, and its
// weights are checked against it: a stump on a point of the new grid that
// the old one lacks is refused under the old certificate and accepted
// under the new; a new release names the new grid.
func TestStumpLegacyGrid(t *testing.T) {
	m := method{}
	b := dp.Budget{Epsilon: 1}
	pub := release.Public{Classes: 2, K: 1, D: 3}
	legacy, err := certificate(b, 40, 2, 0, family{T: LegacyGrid}, 5, perturb.SourceSecure, nil)
	if err != nil {
		t.Fatal(err)
	}
	re, _, err := m.Rebuild(legacy, pub)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(re, legacy) {
		t.Errorf("the legacy certificate rebuilds as\n%+v\nnot\n%+v", re, legacy)
	}
	current, err := certificate(b, 40, 2, 0, currentFamily(b, 40, 2, 0), 5, perturb.SourceSecure, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(current.Assumptions, legacy.Assumptions) {
		t.Fatal("the two grids' certificates say the same")
	}
	old := Stump{Feature: 1, Index: 31, Sign: -1}.Weights(2, LegacyGrid)
	fine := Stump{Feature: 1, Index: 1, Sign: 1}.Weights(2, DefaultGrid)
	for _, c := range []struct {
		cert *release.Certificate
		w    []float64
		ok   bool
	}{{legacy, old, true}, {legacy, fine, false}, {current, old, true}, {current, fine, true}} {
		if err := m.CheckWeights(c.cert, pub, c.w); (err == nil) != c.ok {
			t.Errorf("weights %v under the grid of %d: %v, want accepted %v", c.w, certifiedFamily(c.cert, 40, 2, 0).T, err, c.ok)
		}
	}
	p, err := m.Prepare(context.Background(), release.Rows{X: mat.NewDense(2, 3, []float64{-0.5, 0.2, 1, 0.6, -0.1, 1}), Y: []float64{-1, 1}, Config: trainer.Config{Loss: losses.Logistic{}, Classes: 2}}, b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Release(context.Background(), perturb.Seeded(1))
	if err != nil {
		t.Fatal(err)
	}
	// Two rows: the pairs would void the guarantee, the class is the
	// one-feature stumps' on the new grid.
	if f := certifiedFamily(out.Certificate, 2, 2, 0); f != (family{T: DefaultGrid}) || !slices.Contains(out.Certificate.Assumptions, binaryClass(2, DefaultGrid)) {
		t.Errorf("a new release's certificate does not name the one-feature class of the grid of %d: %+v", DefaultGrid, f)
	}
}
