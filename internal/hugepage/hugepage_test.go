package hugepage

import (
	"runtime"
	"testing"
	"unsafe"
)

func TestInward(t *testing.T) {
	const S = Size
	for _, c := range []struct{ addr, n, beg, end uintptr }{
		{0, 2 * S, 0, 2 * S},
		{S, S, S, 2 * S},
		{1, 2 * S, S, 2 * S},
		{S - 8, 2 * S, S, 2 * S},
		{S + 8, 2 * S, 2 * S, 3 * S},
		{8, S, S, 0},     // no whole huge page: beg > end
		{S, S - 8, S, 0}, // one short of a huge page
	} {
		beg, end := inward(c.addr, c.n)
		if beg%S != 0 || end%S != 0 {
			t.Errorf("inward(%#x, %#x) = %#x, %#x: not multiples of %#x", c.addr, c.n, beg, end, S)
		}
		if beg < end && (beg < c.addr || end > c.addr+c.n) {
			t.Errorf("inward(%#x, %#x) = %#x, %#x: outside the range", c.addr, c.n, beg, end)
		}
		if c.beg < c.end && (beg != c.beg || end != c.end) {
			t.Errorf("inward(%#x, %#x) = %#x, %#x, want %#x, %#x", c.addr, c.n, beg, end, c.beg, c.end)
		}
		if c.beg >= c.end && beg < end {
			t.Errorf("inward(%#x, %#x) = %#x, %#x, want no huge page", c.addr, c.n, beg, end)
		}
	}
}

// TestAdvise checks that Advise advises exactly the whole huge pages inside
// a slice, leaves its contents as they were, and advises nothing in a
// slice smaller than a huge page.
func TestAdvise(t *testing.T) {
	s := make([]float64, 3*Size/8)
	for i := range s {
		s[i] = float64(i)
	}
	got := Advise(s)
	for i, v := range s {
		if v != float64(i) {
			t.Fatalf("s[%d] = %v after Advise, want %d", i, v, i)
		}
	}
	if runtime.GOOS != "linux" {
		if got != 0 {
			t.Errorf("Advise = %d on %s, want 0", got, runtime.GOOS)
		}
		return
	}
	if got == 0 {
		t.Skip("the kernel refused MADV_HUGEPAGE (no transparent huge pages)")
	}
	beg, end := inward(uintptr(unsafe.Pointer(&s[0])), uintptr(len(s))*8)
	if want := int(end - beg); got != want || want < 2*Size {
		t.Errorf("Advise = %d bytes, want %d (at least %d)", got, want, 2*Size)
	}
	if n := Advise(s[:Size/8-1]); n != 0 {
		t.Errorf("Advise of %d bytes = %d, want 0", Size-8, n)
	}
	if n := Advise(nil); n != 0 {
		t.Errorf("Advise(nil) = %d, want 0", n)
	}
	if sh := Share(s); sh < 0 || sh > 1 {
		t.Errorf("Share = %v, outside [0, 1]", sh)
	}
	runtime.KeepAlive(s)
}

func TestMake(t *testing.T) {
	s := Make(Size/8 + 3)
	if len(s) != Size/8+3 {
		t.Fatalf("len(Make(%d)) = %d", Size/8+3, len(s))
	}
	for i, v := range s {
		if v != 0 {
			t.Fatalf("Make: s[%d] = %v, want 0", i, v)
		}
	}
	if Share(nil) != 0 {
		t.Errorf("Share(nil) != 0")
	}
}
