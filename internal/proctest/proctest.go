//go:build unix

// Package proctest holds what the tests of the commands (stabpriv,
// stabpriv-beam) and of their output files share: the signals that stop a
// command with the statuses they must give, waiting for a child process to
// block reading a FIFO, and listing a directory.
package proctest

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Stops are the signals that stop a command, each with its name and the
// exit status the command must give (128 plus the signal's number).
var Stops = []struct {
	Signal syscall.Signal
	Name   string
	Status int
}{
	{syscall.SIGINT, "SIGINT", 130},
	{syscall.SIGTERM, "SIGTERM", 143},
	{syscall.SIGHUP, "SIGHUP", 129},
}

// Mkfifo makes a FIFO at path, or skips the test where the system has
// none.
func Mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
}

// Start starts cmd and returns the channel that receives its Wait error
// when it exits.
func Start(t *testing.T, cmd *exec.Cmd) <-chan error {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return exited
}

// OpenFIFO opens the FIFO at path for writing once a child process has
// opened it for reading (an open without blocking succeeds only then): the
// child is then blocked in a read. It fails the test when exited (the
// child's Wait error) reports first, or after patience; kill stops the
// child before failing.
func OpenFIFO(t *testing.T, path string, exited <-chan error, patience time.Duration, kill func()) *os.File {
	t.Helper()
	for deadline := time.Now().Add(patience); ; {
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		switch {
		case err == nil:
			return f
		case time.Now().After(deadline):
			kill()
			t.Fatalf("the child did not open %s: %v", path, err)
		}
		select {
		case err := <-exited:
			t.Fatalf("the child exited (%v) before it opened %s", err, path)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop sends sig to the child process p and returns its exit status once
// exited (its Wait error) reports it; a child still running after
// patience is killed, and fails the test.
func Stop(t *testing.T, p *os.Process, exited <-chan error, sig syscall.Signal, patience time.Duration) int {
	t.Helper()
	timer := time.AfterFunc(patience, func() { p.Kill() })
	defer timer.Stop()
	if err := p.Signal(sig); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	switch err := <-exited; {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode()
	default:
		t.Fatalf("the child did not exit after %v: %v", sig, err)
		return -1
	}
}

// Entries returns the names in dir.
func Entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
