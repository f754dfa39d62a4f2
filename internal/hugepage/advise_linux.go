package hugepage

import (
	"bufio"
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// advise marks the bytes of b, whole huge pages, with
// madvise(MADV_HUGEPAGE).
func advise(b []byte) error {
	return unix.Madvise(b, unix.MADV_HUGEPAGE)
}

// hugeBytes returns how many bytes of [lo, hi) lie on huge pages by
// /proc/self/smaps: for each mapping that overlaps the range, its
// AnonHugePages times the share of the mapping inside the range.
func hugeBytes(lo, hi uintptr) (float64, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parseSmaps(bufio.NewScanner(f), lo, hi)
}

// parseSmaps is hugeBytes on the lines of an smaps file: a mapping starts
// with a line "start-end perms ..." (hexadecimal addresses), and its
// "AnonHugePages: N kB" line follows.
func parseSmaps(sc *bufio.Scanner, lo, hi uintptr) (float64, error) {
	var total, overlap float64 // overlap: the share of the current mapping in [lo, hi)
	for sc.Scan() {
		line := sc.Bytes()
		if v, ok := bytes.CutPrefix(line, []byte("AnonHugePages:")); ok {
			if overlap > 0 {
				kb, err := strconv.ParseFloat(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 64)
				if err != nil {
					return 0, err
				}
				total += overlap * kb * 1024
			}
			continue
		}
		start, end, ok := mapping(line)
		if !ok {
			continue // a field line
		}
		overlap = 0
		if s, e := max(start, lo), min(end, hi); s < e {
			overlap = float64(e-s) / float64(end-start)
		}
	}
	return total, sc.Err()
}

// mapping returns the range of addresses of an smaps line that starts a
// mapping, "start-end perms ..." in hexadecimal, and false for other lines.
func mapping(line []byte) (start, end uintptr, ok bool) {
	rng, _, _ := bytes.Cut(line, []byte(" "))
	a, b, ok := bytes.Cut(rng, []byte("-"))
	if !ok {
		return 0, 0, false
	}
	s, err1 := strconv.ParseUint(string(a), 16, 64)
	e, err2 := strconv.ParseUint(string(b), 16, 64)
	if err1 != nil || err2 != nil || e <= s {
		return 0, 0, false
	}
	return uintptr(s), uintptr(e), true
}
