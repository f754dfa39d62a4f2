package benchdata

import (
	"math"
	"testing"
)

func TestSynth(t *testing.T) {
	for _, classes := range []int{0, 3} {
		X, y := Synth(200, 7, classes, 5)
		X2, y2 := Synth(200, 7, classes, 5)
		n, d := X.Dims()
		if n != 200 || d != 7 || len(y) != n {
			t.Fatalf("classes %d: %d x %d data with %d labels", classes, n, d, len(y))
		}
		seen := map[float64]bool{}
		for i := 0; i < n; i++ {
			if norm := math.Sqrt(dot(X.RawRowView(i), X.RawRowView(i))); norm > 1+1e-12 {
				t.Fatalf("classes %d: row %d has norm %v > 1", classes, i, norm)
			}
			for j := 0; j < d; j++ {
				if X.At(i, j) != X2.At(i, j) {
					t.Fatalf("classes %d: the same seed gave different rows", classes)
				}
			}
			if y[i] != y2[i] {
				t.Fatalf("classes %d: the same seed gave different labels", classes)
			}
			switch {
			case classes == 0 && y[i] != 1 && y[i] != -1:
				t.Fatalf("binary label %v", y[i])
			case classes > 0 && (y[i] < 0 || y[i] >= float64(classes) || y[i] != math.Trunc(y[i])):
				t.Fatalf("label %v of %d classes", y[i], classes)
			}
			seen[y[i]] = true
		}
		if want := max(classes, 2); len(seen) != want {
			t.Fatalf("classes %d: %d distinct labels, want %d", classes, len(seen), want)
		}
	}
}
