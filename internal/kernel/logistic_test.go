package kernel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stabpriv/stabpriv/losses"
)

// logisticMargins returns margins z and labels y for LogisticParts: every
// scale from the smallest subnormal up to the end of the assembly kernel's
// range; the margins around each point where math.Exp's exponent k =
// round(-|m| log2(e)) changes (|m| = (j + 1/2) ln 2, j < 1022, and their
// neighbours two ulps either way), where its range reduction is most
// delicate; zeros of both signs; and past the range, 708 to 1e300,
// infinities and NaN. The labels are -1 and +1, and a few others.
func logisticMargins() (z, y []float64) {
	r := rand.New(rand.NewPCG(11, 12))
	for range 1 << 16 {
		z = append(z, r.NormFloat64()*math.Pow(10, float64(r.IntN(7)-4)))
		z = append(z, (2*r.Float64()-1)*logisticRange)
	}
	for exp := -1074; exp < 10; exp++ {
		for range 4 {
			v := math.Ldexp(1+r.Float64(), exp)
			if exp < -1022 {
				v = math.Ldexp(1, exp) * float64(1+r.IntN(1<<10))
			}
			if v < logisticRange {
				z = append(z, v, -v)
			}
		}
	}
	for j := range 1022 {
		v := (float64(j) + 0.5) * math.Ln2
		for _, u := range []float64{v, math.Nextafter(v, 0), math.Nextafter(v, 1e3),
			math.Nextafter(math.Nextafter(v, 0), 0), math.Nextafter(math.Nextafter(v, 1e3), 1e3)} {
			if u < logisticRange {
				z = append(z, u, -u)
			}
		}
	}
	z = append(z, 0, math.Copysign(0, -1), 0x1p-1074, -0x1p-1074, 36, -36,
		math.Nextafter(logisticRange, 0), -math.Nextafter(logisticRange, 0),
		logisticRange, -logisticRange, 708.5, -708.5, 745, -745, 746, -746, 1e300, -1e300,
		math.Inf(1), math.Inf(-1), math.NaN())
	y = make([]float64, len(z))
	for i := range y {
		y[i] = float64(2*r.IntN(2) - 1)
		if i%1001 == 7 {
			y[i] = []float64{0, 0.5, -3, math.Inf(1), math.NaN()}[r.IntN(5)]
		}
	}
	return z, y
}

// TestLogisticParts checks LogisticParts row by row against its Go twin
// (logisticRow) bit for bit, on every row and with the assembly kernel and
// without: so the assembly gives the twin's bits wherever it runs (|m| <
// logisticRange) and the wrapper computes every other row. For the labels
// -1 and +1 it also checks the twin against losses.Logistic's Parts1,
// whose bits the doc promises, and its e against math.Exp. The margins are
// logisticMargins's, in blocks of every length up to 9 (the empty block and
// tails of the four-row kernel) and then all at once.
func TestLogisticParts(t *testing.T) {
	z, y := logisticMargins()
	asmAndGo(t, hasLogisticKernel, func(t *testing.T) {
		n := len(z)
		plus, e, d1, d2 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		for lo, k := 0, 0; lo < n; k++ {
			m := min(k%10, n-lo)
			LogisticParts(z[lo:lo+m], y[lo:], plus[lo:], e[lo:], d1[lo:], d2[lo:])
			lo += m
		}
		check := func(how string) {
			t.Helper()
			for i, zi := range z {
				var want [4]float64
				want[0], want[1], want[2], want[3] = logisticRow(zi, y[i])
				got := [4]float64{plus[i], e[i], d1[i], d2[i]}
				for k := range got {
					if !sameBits(got[k], want[k]) {
						t.Fatalf("%s: z = %v, y = %v: part %d is %v, twin %v", how, zi, y[i], k, got[k], want[k])
					}
				}
				if y[i] != 1 && y[i] != -1 {
					continue
				}
				var parts [4]float64
				parts[0], parts[1], parts[2], parts[3] = losses.Logistic{}.Parts1(zi, y[i])
				for k := range got {
					if !sameBits(want[k], parts[k]) {
						t.Fatalf("z = %v, y = %v: the twin's part %d is %v, Parts1 %v", zi, y[i], k, want[k], parts[k])
					}
				}
				if exp := math.Exp(-math.Abs(zi)); !sameBits(want[1], exp) {
					t.Fatalf("z = %v: e = %v, math.Exp %v", zi, want[1], exp)
				}
			}
		}
		check("blocks")
		clear(plus)
		LogisticParts(z, y, plus, e, d1, d2)
		check("all rows")
	})
}

// TestLogisticPartsFar checks that the assembly kernel flags a group of
// four rows exactly when one of them is past its range (|m| >=
// logisticRange, or NaN): LogisticParts looks for those rows only then.
func TestLogisticPartsFar(t *testing.T) {
	if !hasLogisticKernel {
		t.Skip("no assembly kernel on this build or processor")
	}
	z, y := logisticMargins()
	var out [16]float64
	flagged := 0
	for g := 0; g+4 <= len(z); g += 4 {
		far := logisticParts4(&z[g], &y[g], &out[0], &out[4], &out[8], &out[12], 1)
		want := false
		for i := g; i < g+4; i++ {
			want = want || !(math.Abs(-y[i]*z[i]) < logisticRange)
		}
		if (far != 0) != want {
			t.Fatalf("rows %d..%d (z %v, y %v): far = %d, want a flag %v", g, g+3, z[g:g+4], y[g:g+4], far, want)
		}
		if want {
			flagged++
		}
	}
	if flagged == 0 {
		t.Fatal("no group past the range")
	}
}

// BenchmarkLogisticParts runs over a block of 64 rows.
func BenchmarkLogisticParts(b *testing.B) {
	const n = 64
	z, y := make([]float64, n), make([]float64, n)
	for i := range z {
		z[i], y[i] = float64(i%9)-4, float64(1-2*(i%2))
	}
	plus, e, d1, d2 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for b.Loop() {
		LogisticParts(z, y, plus, e, d1, d2)
	}
}
