package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stabpriv/stabpriv/internal/interrupt"
	"github.com/stabpriv/stabpriv/internal/proctest"
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

// TestInterrupt stops a long training run with SIGINT, SIGTERM and SIGHUP:
// the command says so, exits with 128 plus the signal's number and writes
// nothing, not even a temporary file.
func TestInterrupt(t *testing.T) {
	data := writeCSV(t, clusters(2, 20000))
	for _, stop := range proctest.Stops {
		t.Run(stop.Name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "model.json")
			cmd := child("train", "--mechanism", "none", "--data", data, "--label", "class", "--passes", "1000", "--log-level", "debug", "--out", out)
			pipe, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The signal handler is set up before anything is logged;
			// the first pass's log line says the training is under way
			// (it has about 1000 passes to go): signal it then, whatever
			// the machine's speed.
			lines := bufio.NewScanner(pipe)
			var stderr strings.Builder
			for !strings.Contains(stderr.String(), `msg="trainer: pass done"`) {
				if !lines.Scan() {
					cmd.Wait()
					t.Fatalf("the child did not log a training pass; stderr:\n%s", stderr.String())
				}
				stderr.WriteString(lines.Text() + "\n")
			}
			if err := cmd.Process.Signal(stop.Signal); err != nil {
				t.Fatal(err)
			}
			for lines.Scan() {
				stderr.WriteString(lines.Text() + "\n")
			}
			if status := exitStatus(t, cmd.Wait()); status != stop.Status {
				t.Fatalf("exit %d, want %d; stderr:\n%s", status, stop.Status, stderr.String())
			}
			// The run itself stopped on the cancelled context (train's
			// message), not the fallback exit after interrupt.Grace that
			// TestInterruptBlocked checks ("stabpriv: interrupted").
			if want := "stabpriv: train: interrupted by " + stop.Name + ", nothing written"; !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
			}
			if names := proctest.Entries(t, dir); len(names) > 0 {
				t.Errorf("the stopped run wrote %v", names)
			}
		})
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

// TestInterruptBlocked stops a command blocked where it cannot see the
// cancellation (reading its data from a FIFO that never ends) with each
// stop signal: the process still exits soon after, with 128 plus the
// signal's number, says so and writes nothing.
func TestInterruptBlocked(t *testing.T) {
	for _, stop := range proctest.Stops {
		t.Run(stop.Name, func(t *testing.T) {
			t.Parallel() // each waits interrupt.Grace
			dir := t.TempDir()
			fifo := filepath.Join(dir, "data.csv")
			proctest.Mkfifo(t, fifo)
			out := filepath.Join(dir, "model.json")
			cmd := child("train", "--mechanism", "none", "--data", fifo, "--label", "y", "--out", out)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			exited := proctest.Start(t, cmd)
			w := proctest.OpenFIFO(t, fifo, exited, childPatience, func() { cmd.Process.Kill() })
			defer w.Close()
			io.WriteString(w, "a,y\n")
			// A child that ignores the signal is killed, and fails the test.
			if status := proctest.Stop(t, cmd.Process, exited, stop.Signal, interrupt.Grace+childPatience); status != stop.Status {
				t.Fatalf("exit %d, want %d; stderr:\n%s", status, stop.Status, stderr.String())
			}
			if want := "stabpriv: interrupted by " + stop.Name + ", nothing written"; !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the stopped run wrote %s (%v)", out, err)
			}
		})
	}
}
