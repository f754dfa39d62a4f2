package losses

import (
	"math"
	"testing"
)

func TestProba(t *testing.T) {
	p := make([]float64, 3)
	Logistic{}.Proba(p, []float64{math.Log(3)})
	if math.Abs(p[1]-0.75) > 1e-15 || math.Abs(p[0]+p[1]-1) > 1e-15 {
		t.Errorf("logistic: %v, want [0.25 0.75]", p[:2])
	}
	Softmax{}.Proba(p, []float64{1000, 1000 + math.Log(2), -1000})
	if math.Abs(p[1]-2.0/3) > 1e-12 || math.Abs(p[0]-1.0/3) > 1e-12 || p[2] != 0 {
		t.Errorf("softmax of large margins: %v", p)
	}
	// Logistic and softmax are the probabilistic built-in losses.
	for _, l := range All() {
		_, ok := l.(Probabilistic)
		if want := l.Name() == "logistic" || l.Name() == "softmax"; ok != want {
			t.Errorf("%s: Probabilistic %v, want %v", l.Name(), ok, want)
		}
	}
}
