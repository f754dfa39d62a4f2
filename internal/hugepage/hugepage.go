// Package hugepage asks the operating system to back large float64 slices
// with transparent huge pages of 2 MiB, where it supports them (Linux).
//
// A pass of the SGD trainer reads the rows of a large data matrix in a
// random order: on 4 kB pages each such read costs a TLB miss, a walk of
// the page tables, before its cache miss; on 2 MiB pages the tables are 512
// times smaller and stay in the cache. Linux gives a process huge pages
// without being asked only when /sys/kernel/mm/transparent_hugepage/enabled
// is "always"; in its "madvise" mode, a common default, only ranges marked
// with madvise(MADV_HUGEPAGE) get them. Advise marks a slice's whole 2 MiB
// pages. The advice is a hint: the contents of the slice do not change, the
// kernel may still use 4 kB pages, and a failure is ignored, so that no
// result and no error of a caller depends on it.
package hugepage

import "unsafe"

// Size is the size of the huge pages Advise aligns to: 2 MiB, the size of
// a transparent huge page on amd64 and on arm64 with 4 kB base pages.
const Size = 2 << 20

// Advise asks the kernel to back the whole huge pages of Size bytes inside
// s (its start rounded up, its end rounded down to a multiple of Size)
// with huge pages, and returns the number of bytes it advised: 0 when s
// holds no whole huge page, on other platforms than Linux, or when the
// kernel refused the advice (without transparent huge pages). Pages of s
// first written after the call get huge pages where the kernel can; pages
// already written are left to the kernel's background collapse
// (khugepaged), so callers advise a slice right after allocating it and
// before filling it. It never changes the contents of s.
func Advise(s []float64) int {
	if len(s) == 0 {
		return 0
	}
	p := unsafe.Pointer(&s[0])
	beg, end := inward(uintptr(p), uintptr(len(s))*8)
	if beg >= end {
		return 0
	}
	// The huge pages' bytes, as a slice into s's memory (which s keeps
	// alive through the call).
	b := unsafe.Slice((*byte)(unsafe.Add(p, beg-uintptr(p))), end-beg)
	if advise(b) != nil {
		return 0
	}
	return len(b)
}

// inward returns the largest range [beg, end) of whole huge pages (both
// multiples of Size) inside the n bytes from addr; beg >= end when there is
// none.
func inward(addr, n uintptr) (beg, end uintptr) {
	beg = (addr + Size - 1) &^ (Size - 1)
	end = (addr + n) &^ (Size - 1)
	return beg, end
}

// Make returns a new slice of n zeros advised by Advise: the storage of a
// large matrix that is filled after it is made.
func Make(n int) []float64 {
	s := make([]float64, n)
	Advise(s)
	return s
}

// Share returns the share, in [0, 1], of the bytes of s that the kernel
// backs with huge pages now, as /proc/self/smaps reports them (Linux; 0
// elsewhere, or when it cannot tell). The smaps file counts the huge pages
// of each mapping, not where in the mapping they lie, so a mapping that s
// covers in part is counted as if its huge pages were spread evenly. It
// reads the whole file: call it once per large slice, not in a loop.
func Share(s []float64) float64 {
	if len(s) == 0 {
		return 0
	}
	addr := uintptr(unsafe.Pointer(&s[0]))
	n := uintptr(len(s)) * 8
	huge, err := hugeBytes(addr, addr+n)
	if err != nil {
		return 0
	}
	return min(1, huge/float64(n))
}
