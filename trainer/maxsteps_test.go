package trainer

import (
	"context"
	"errors"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/losses"
)

// TestMaxSteps: a run of more than MaxSteps SGD steps is refused before it
// starts (its stability analysis, and a verification of its file, would
// evaluate the growth recursion for each step); one at the cap is not
// refused by this check.
func TestMaxSteps(t *testing.T) {
	const n = 300 // at most MaxPasses passes: n > MaxSteps/MaxPasses
	X := mat.NewDense(n, 1, nil)
	y := make([]float64, n)
	for i := range n {
		X.Set(i, 0, float64(i%7)/10-0.3)
		y[i] = float64(2*(i%2) - 1)
	}
	over := MaxSteps/n + 1 // passes of n steps at batch 1
	tr, err := New(Config{Loss: losses.Logistic{}, Kappa: 1, Eta: 0.1, Passes: over, Batch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tr.Train(context.Background(), X, y); !errors.Is(err, ErrConfig) {
		t.Errorf("%d passes of %d steps: %v, want ErrConfig", over, n, err)
	}
	if _, err := tr.newProblem(X, y); !errors.Is(err, ErrConfig) {
		t.Errorf("newProblem: %v", err)
	}
	tr.cfg.Passes = MaxSteps / n // not run: newProblem only
	if _, err := tr.newProblem(X, y); err != nil {
		t.Errorf("%d passes of %d steps, at the cap: %v", MaxSteps/n, n, err)
	}
}
