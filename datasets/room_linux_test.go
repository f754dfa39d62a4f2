package datasets

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// roomChild, set in the environment, makes TestReadTableRoomUnwritten
// read the table itself, in the new process the test starts.
const roomChild = "DATASETS_ROOM_CHILD"

// TestReadTableRoomUnwritten: the room the reader reserves past the rows
// it reads costs address space, not memory: none of its pages is
// resident (mincore), bar those next to the rows. Its first 16 rows are
// short and the rest long, so that the room, estimated from the first
// rows, holds about five times the rows. The table is read in a new
// process (the test binary), whose heap has no freed memory that the
// room would take (and clear) as the reader's first large allocation in
// the train command takes none.
func TestReadTableRoomUnwritten(t *testing.T) {
	if os.Getenv(roomChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestReadTableRoomUnwritten$", "-test.v")
		cmd.Env = append(os.Environ(), roomChild+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "resident") {
			t.Fatalf("the reading process: %v\n%s", err, out)
		}
		t.Logf("%s", out)
		return
	}
	var b bytes.Buffer
	b.WriteString("a,b,c,d,y\n")
	for range sizeSample {
		b.WriteString("0,0,0,0,1\n")
	}
	long := strings.Repeat("0.12345678901,", 4) + "0\n"
	for range 100000 {
		b.WriteString(long)
	}
	tab, err := ReadTable(bytes.NewReader(b.Bytes()), "in.csv")
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	// The room from 2 MiB past the rows (a huge page the last rows may
	// share) to its end, in whole pages.
	room := tab.vals[len(tab.vals):cap(tab.vals)]
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(room))) + 2<<20
	hi := uintptr(unsafe.Pointer(unsafe.SliceData(room))) + uintptr(len(room))*8
	lo = (lo + uintptr(page) - 1) &^ uintptr(page-1)
	hi &^= uintptr(page - 1)
	if hi <= lo+4<<20 {
		t.Fatalf("room of %d values past %d: too little to tell", cap(tab.vals)-len(tab.vals), len(tab.vals))
	}
	vec := make([]byte, (hi-lo)/uintptr(page))
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, lo, hi-lo, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Skipf("mincore: %v", e)
	}
	resident := 0
	for _, v := range vec {
		resident += int(v & 1)
	}
	t.Logf("%d of the %d pages of the room resident", resident, len(vec))
	if resident > 0 {
		t.Errorf("%d of the %d pages of the room that no row was written to are resident, want none", resident, len(vec))
	}
}
