//go:build !linux

package trainer

import (
	"testing"
	"time"
)

// threadCPU returns the wall time since the process started: elsewhere than
// on Linux the benchmarks report wall times in place of the thread's CPU
// time.
func threadCPU(*testing.B) time.Duration { return time.Since(processStart) }

var processStart = time.Now()
