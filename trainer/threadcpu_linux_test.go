package trainer

import (
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// threadCPU returns the CPU time the calling OS thread has used
// (clock_gettime with CLOCK_THREAD_CPUTIME_ID, to the nanosecond: the
// times of getrusage advance by scheduler ticks, too coarse for a round of
// a few milliseconds); the caller locks its goroutine to the thread.
func threadCPU(b *testing.B) time.Duration {
	const clockThreadCPUTime = 3
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		b.Fatal(errno)
	}
	return time.Duration(ts.Nano())
}
