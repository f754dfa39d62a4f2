package preprocess

import (
	"math"
	"testing"
)

// TestAutoProjectDim checks the rule: no projection unless the features
// outnumber the rows or when k would reach w, the formula otherwise (more
// rows or eps: more dimensions; more outputs: fewer), and errors for
// values that are not positive.
func TestAutoProjectDim(t *testing.T) {
	for _, tt := range []struct {
		n, w, outputs int
		eps           float64
		want          int
	}{
		{1000, 1000, 1, 1, 0},
		{1000, 500, 1, 1, 0},
		{102, 12625, 1, 1, int(math.Ceil(AutoProjectC * math.Pow(102, 2.0/3)))},
		{102, 12625, 1, 8, int(math.Ceil(AutoProjectC * math.Pow(816, 2.0/3)))},
		{1000, 5000, 10, 1, int(math.Ceil(AutoProjectC * math.Pow(100, 2.0/3)))},
		{5, 1000, 18, 0.01, AutoProjectMin},
		{100, 101, 1, 1e6, 0}, // k >= w
	} {
		got, err := AutoProjectDim(tt.n, tt.w, tt.outputs, tt.eps)
		if err != nil || got != tt.want {
			t.Errorf("AutoProjectDim(%d, %d, %d, %g) = %d, %v, want %d", tt.n, tt.w, tt.outputs, tt.eps, got, err, tt.want)
		}
	}
	a, _ := AutoProjectDim(200, 20000, 1, 1)
	b, _ := AutoProjectDim(200, 20000, 1, 4)
	c, _ := AutoProjectDim(200, 20000, 4, 4)
	if !(a < b && c < b) {
		t.Errorf("k(eps 1) = %d, k(eps 4) = %d, k(eps 4, 4 outputs) = %d: want the second largest", a, b, c)
	}
	for _, bad := range [][4]float64{{0, 10, 1, 1}, {10, 0, 1, 1}, {10, 100, 0, 1}, {10, 100, 1, 0}, {10, 100, 1, math.NaN()}, {10, 100, 1, math.Inf(1)}} {
		if _, err := AutoProjectDim(int(bad[0]), int(bad[1]), int(bad[2]), bad[3]); err == nil {
			t.Errorf("AutoProjectDim%v: no error", bad)
		}
	}
}
