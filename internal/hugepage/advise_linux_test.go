package hugepage

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestAdviseFlags checks, in /proc/self/smaps, that the mapping holding an
// advised slice's huge pages carries the kernel's mark of the advice (hg
// in VmFlags).
func TestAdviseFlags(t *testing.T) {
	s := make([]float64, 3*Size/8)
	if Advise(s) == 0 {
		t.Skip("the kernel refused MADV_HUGEPAGE (no transparent huge pages)")
	}
	beg, _ := inward(uintptr(unsafe.Pointer(&s[0])), uintptr(len(s))*8)
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	in, found := false, false
	for _, line := range strings.Split(string(b), "\n") {
		if lo, hi, ok := mapping([]byte(line)); ok {
			in = lo <= beg && beg < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			found = true
			if !strings.Contains(" "+line+" ", " hg ") {
				t.Errorf("the advised mapping's %q has no hg", line)
			}
		}
	}
	if !found {
		t.Errorf("no mapping holds %#x", beg)
	}
}

// TestParseSmaps checks hugeBytes' reading of smaps on a fixed text: a
// mapping inside the range counts whole, one half inside counts half of its
// huge pages, one outside not at all, and field lines are not mappings.
func TestParseSmaps(t *testing.T) {
	const text = `00400000-00600000 r-xp 00000000 08:01 123 /bin/x
Size:               2048 kB
AnonHugePages:      2048 kB
VmFlags: rd ex mr mw me
7f0000000000-7f0000800000 rw-p 00000000 00:00 0
Size:               8192 kB
AnonHugePages:      4096 kB
THPeligible:    1
VmFlags: rd wr mr mw me ac hg
7f0000800000-7f0001000000 rw-p 00000000 00:00 0
Size:               8192 kB
AnonHugePages:      8192 kB
VmFlags: rd wr mr mw me ac
`
	lo, hi := uintptr(0x7f0000000000), uintptr(0x7f0000c00000)
	got, err := parseSmaps(bufio.NewScanner(strings.NewReader(text)), lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	// The first mapping is outside, the second inside (4 MiB of huge
	// pages), the third half inside (half of its 8 MiB).
	if want := float64(8 << 20); got != want {
		t.Errorf("parseSmaps = %v bytes, want %v", got, want)
	}
	bad := "7f0000000000-7f0000800000 rw-p 00000000 00:00 0\nAnonHugePages: x kB\n"
	if _, err := parseSmaps(bufio.NewScanner(strings.NewReader(bad)), lo, hi); err == nil {
		t.Error("parseSmaps accepted a malformed AnonHugePages line")
	}
}
