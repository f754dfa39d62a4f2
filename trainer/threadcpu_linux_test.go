package trainer

import (
	"syscall"
	"testing"
	"time"
)

// threadCPU returns the CPU time the calling OS thread has used
// (getrusage with RUSAGE_THREAD); the caller locks its goroutine to the
// thread.
func threadCPU(b *testing.B) time.Duration {
	const rusageThread = 1
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
