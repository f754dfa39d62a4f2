package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childArgs makes the test binary run the command line in it (separated
// by newlines) as the stabpriv command.
const childArgs = "STABPRIV_TEST_MAIN_ARGS"

// childPatience is how long a test waits for a child process to reach a
// point (start, stop) before it fails: far above the second or so this
// takes on a loaded 2-core machine, it bounds only a test that fails.
const childPatience = time.Minute

func TestMain(m *testing.M) {
	if args := os.Getenv(childArgs); args != "" {
		os.Args = append([]string{"stabpriv"}, strings.Split(args, "\n")...)
		main()
		return
	}
	os.Exit(m.Run())
}

// child returns the command that runs the command line args as stabpriv
// in a new process (the test binary, through childArgs).
func child(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgs+"="+strings.Join(args, "\n"))
	return cmd
}

// exitStatus returns the exit status of a finished child (Wait's or Run's
// error err), failing the test when it did not exit.
func exitStatus(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode()
	}
	t.Fatalf("the child did not exit: %v", err)
	return -1
}

// TestInterrupt interrupts a long training run with SIGINT: the command
// exits with status 130 and writes nothing.
func TestInterrupt(t *testing.T) {
	data := writeCSV(t, clusters(2, 20000))
	out := filepath.Join(t.TempDir(), "model.json")
	args := []string{"train", "--mechanism", "none", "--data", data, "--label", "class", "--passes", "1000", "--log-level", "debug", "--out", out}
	cmd := child(args...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The signal handler is set up before anything is logged; the first
	// pass's log line says the training is under way (it has about 1000
	// passes to go): interrupt it then, whatever the machine's speed.
	lines := bufio.NewScanner(pipe)
	var stderr strings.Builder
	for !strings.Contains(stderr.String(), `msg="trainer: pass done"`) {
		if !lines.Scan() {
			cmd.Wait()
			t.Fatalf("the child did not log a training pass; stderr:\n%s", stderr.String())
		}
		stderr.WriteString(lines.Text() + "\n")
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
		stderr.WriteString(lines.Text() + "\n")
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want status 130; stderr:\n%s", err, stderr.String())
	}
	// The run itself stopped on the cancelled context (train's message),
	// not the fallback exit after interruptGrace that TestInterruptBlocked
	// checks ("stabpriv: interrupted").
	if !strings.Contains(stderr.String(), "train: interrupted, nothing written") || !strings.Contains(stderr.String(), "context canceled") {
		t.Errorf("stderr does not say the run stopped on the interrupt:\n%s", stderr.String())
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the interrupted run wrote %s (%v)", out, err)
	}
}

func TestVersion(t *testing.T) {
	stdout, _, err := call(t, "version")
	if err != nil || !strings.HasPrefix(stdout, "stabpriv ") || !strings.Contains(stdout, "go1.") {
		t.Errorf("version: %q, %v", stdout, err)
	}
	if stdout, _, err := call(t, "help", "help"); err != nil || !strings.Contains(stdout, "Commands:") {
		t.Errorf("help help: %q, %v", stdout, err)
	}
}

// TestInterruptBlocked interrupts a command blocked where it cannot see
// the cancellation (reading its data from a FIFO that never ends): the
// process still exits with status 130 soon after, and writes nothing.
func TestInterruptBlocked(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "data.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	out := filepath.Join(dir, "model.json")
	cmd := child("train", "--mechanism", "none", "--data", fifo, "--label", "y", "--out", out)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Opening the FIFO for writing without blocking succeeds once the
	// child has opened it for reading: it is then blocked in a read.
	var w *os.File
	for deadline := time.Now().Add(childPatience); w == nil; {
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		switch {
		case err == nil:
			w = f
		case time.Now().After(deadline):
			cmd.Process.Kill()
			t.Fatalf("the child did not open its data: %v", err)
		default:
			time.Sleep(20 * time.Millisecond)
		}
	}
	defer w.Close()
	io.WriteString(w, "a,y\n")
	// A child that ignores the interrupt is killed, and fails the test.
	timer := time.AfterFunc(interruptGrace+childPatience, func() { cmd.Process.Kill() })
	defer timer.Stop()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want status 130; stderr:\n%s", err, stderr.String())
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the interrupted run wrote %s (%v)", out, err)
	}
}
