package stabbeam

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/stabpriv/stabpriv/modelfile"
)

// workerDir holds the binaries make beam-workers builds (static,
// CGO_ENABLED=0): stabpriv-beam, the launcher and the worker, and boot,
// Beam's Go container boot loader that a PROCESS environment runs.
func workerDir() string {
	if d := os.Getenv("STABPRIV_BEAM_BIN"); d != "" {
		return d
	}
	return filepath.Join("..", "out", "beam")
}

// freePort returns a TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		t.Skipf("no local port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestUniversalOnPrism runs the command, built static by the Makefile, on
// the universal runner against a prism job server that the test starts,
// with the worker binary staged to the job (--worker_binary) and run by
// Beam's boot loader in a PROCESS environment, as a Flink, Spark or
// Dataflow job would run it in its container. The model file is the one
// the embedded runner writes, byte for byte, and verifies. It is skipped
// when the binaries are missing (make beam-workers builds them) or the
// job server does not start within the test's budget.
func TestUniversalOnPrism(t *testing.T) {
	dir := workerDir()
	launcher, boot := filepath.Join(dir, "stabpriv-beam"), filepath.Join(dir, "boot")
	for _, f := range []string{launcher, boot} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("%s is missing: run make beam-workers (static worker and boot loader) first", f)
		}
	}
	launcher, _ = filepath.Abs(launcher)
	boot, _ = filepath.Abs(boot)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	port := freePort(t)
	startCtx, startCancel := context.WithTimeout(ctx, 10*time.Second)
	_, err := prism.CreateJobServer(startCtx, prism.Options{Port: port})
	startCancel()
	if err != nil {
		t.Skipf("the prism job server did not start within 10s: %v", err)
	}

	work := t.TempDir()
	// prism (2.77) starts a PROCESS environment's command with
	// --id='ID', quotes included, which the boot loader passes on as the
	// worker's id; the wrapper removes them. It runs in the test's
	// directory (the boot loader writes pipeline_options.json there), and
	// its output goes to a file, so no worker holds the test's output.
	wrapper := filepath.Join(work, "boot.sh")
	script := "#!/bin/sh\ncd " + work + " || exit 1\nid=\nfor a in \"$@\"; do case \"$a\" in --id=*) id=$(printf %s \"${a#--id=}\" | tr -d \"'\");; esac; done\n" +
		"for a in \"$@\"; do case \"$a\" in --id=*) ;; *) set -- \"$@\" \"$a\";; esac; shift; done\n" +
		"exec " + boot + " --id=\"$id\" --semi_persist_dir=" + work + " \"$@\" >>" + filepath.Join(work, "boot.log") + " 2>&1\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	glob := writeShards(t, work, 2, 150, 2, 3)
	bounds := filepath.Join(work, "bounds.csv")
	if err := os.WriteFile(bounds, []byte("f0,-3,5\nf1,-3,5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--data", glob, "--label", "y", "--classes", "neg,pos", "--bounds", bounds,
		"--mechanism", "gamma", "--epsilon", "1", "--partitions", "3", "--seed", "3", "--noise", "seeded", "--noise-seed", "9"}
	run := func(out string, extra ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, launcher, append(append(args, "--out", out), extra...)...)
		cmd.Dir = work
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if b, err := cmd.Output(); err != nil {
			t.Fatalf("%s %s: %v\n%s\n%s", launcher, strings.Join(extra, " "), err, b, tail(stderr.String(), 4000))
		}
	}
	before, _ := filepath.Glob("/tmp/bin*")
	defer removeCopies(before, launcher) // the boot loader's copies of the worker
	start := time.Now()
	universal := filepath.Join(work, "universal.json")
	run(universal, "--runner", "universal", "--endpoint", fmt.Sprintf("localhost:%d", port),
		"--environment_type", "PROCESS", "--environment_config", fmt.Sprintf(`{"command": %q}`, wrapper),
		"--worker_binary", launcher)
	t.Logf("universal runner on prism, PROCESS workers: %v", time.Since(start).Round(time.Millisecond))
	embedded := filepath.Join(work, "embedded.json")
	run(embedded, "--runner", "prism")
	a, err := os.ReadFile(universal)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(embedded)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("the universal runner's model file differs from the embedded runner's")
	}
	r, err := modelfile.ReadFile(universal)
	if err != nil {
		t.Fatal(err)
	}
	checkClaim(t, "universal", r)
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// removeCopies ends the workers that the boot loader started from its
// copies of the worker binary (prism ends the boot loader, not the worker,
// which would live on, holding what the test's process held open) and
// removes the directories /tmp/bin* it made for them (it does not take a
// directory): those not in before whose file worker has the size of the
// launcher.
func removeCopies(before []string, launcher string) {
	st, err := os.Stat(launcher)
	if err != nil {
		return
	}
	old := map[string]bool{}
	for _, p := range before {
		old[p] = true
	}
	now, _ := filepath.Glob("/tmp/bin*")
	for _, p := range now {
		if w, err := os.Stat(filepath.Join(p, "worker")); !old[p] && err == nil && w.Size() == st.Size() {
			exes, _ := filepath.Glob("/proc/[0-9]*/exe")
			for _, e := range exes {
				if target, err := os.Readlink(e); err == nil && target == filepath.Join(p, "worker") {
					if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(e))); err == nil {
						if proc, err := os.FindProcess(pid); err == nil {
							proc.Kill()
						}
					}
				}
			}
			os.RemoveAll(p)
		}
	}
}
