//go:build unix

package safefile

import (
	"errors"
	"syscall"
)

// alive reports whether the process pid of this machine may be running:
// false only when the system says there is no such process (a process of
// another user is alive, and so is a PID reused by another program: its
// temporary files then wait for StaleAge).
func alive(pid int) bool {
	return pid > 0 && !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
