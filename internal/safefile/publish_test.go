package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// raceNew runs n concurrent New writes of distinct contents to path, each
// holding its temporary file until all n have written theirs, and returns
// their errors and contents.
func raceNew(path string, n int) ([]error, []string) {
	errs, contents := make([]error, n), make([]string, n)
	var written, all sync.WaitGroup
	written.Add(n)
	all.Add(n)
	for i := range n {
		contents[i] = fmt.Sprintf("writer %d\n", i)
		go func() {
			defer all.Done()
			errs[i] = Write(path, 0o644, New, func(w io.Writer) error {
				_, err := io.WriteString(w, contents[i])
				written.Done()
				written.Wait() // every writer has its temporary file
				return err
			})
		}()
	}
	all.Wait()
	return errs, contents
}

// checkOneWinner checks that exactly one of the writes of raceNew
// succeeded, the others failing with ErrExists, that the target holds the
// winner's contents and that no temporary file is left.
func checkOneWinner(t *testing.T, path string, errs []error, contents []string) {
	t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("writers %d and %d both succeeded", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, ErrExists) || !errors.Is(err, ErrTarget) || !errors.Is(err, fs.ErrExist):
			t.Errorf("writer %d: %v, want ErrExists", i, err)
		case !strings.Contains(err.Error(), "another run wrote it first"):
			t.Errorf("writer %d: the message does not say why: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer succeeded")
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != contents[winner] {
		t.Errorf("the target holds %q (%v), want the winner's %q", got, err, contents[winner])
	}
	if temps := tempsIn(t, filepath.Dir(path)); len(temps) > 0 {
		t.Errorf("temporary files left: %v", temps)
	}
}

// TestNewOneWinner: of eight concurrent New writes to one new path,
// exactly one publishes; a New write over an existing file fails and
// leaves it as it was.
func TestNewOneWinner(t *testing.T) {
	for round := range 5 {
		path := filepath.Join(t.TempDir(), "model.json")
		errs, contents := raceNew(path, 8)
		checkOneWinner(t, path, errs, contents)
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
	path := filepath.Join(t.TempDir(), "old.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(path, 0o644, New, []byte("new")); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "may not replace") {
		t.Errorf("a New write over a file: %v, want ErrExists, the file there before", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("the file became %q", got)
	}
	if err := WriteBytes(path, 0o644, Replace, []byte("new")); err != nil {
		t.Errorf("a Replace write: %v", err)
	}
}

// TestWriteAllNewUndo: when the second of two New files cannot be
// published (its target appeared while the call worked), the first,
// already published, is removed: nothing of the call remains.
func TestWriteAllNewUndo(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	err := WriteAll([]File{
		{Path: a, Perm: 0o644, Write: func(w io.Writer) error { _, err := io.WriteString(w, "a"); return err }},
		{Path: b, Perm: 0o644, Write: func(w io.Writer) error {
			// Another run publishes b meanwhile.
			if err := os.WriteFile(b, []byte("theirs"), 0o644); err != nil {
				return err
			}
			_, err := io.WriteString(w, "b")
			return err
		}},
	})
	if !errors.Is(err, ErrExists) {
		t.Fatalf("%v, want ErrExists", err)
	}
	if _, err := os.Stat(a); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the first file stayed after the second failed (%v)", err)
	}
	if got, _ := os.ReadFile(b); string(got) != "theirs" {
		t.Errorf("the other run's file became %q", got)
	}
	if temps := tempsIn(t, dir); len(temps) > 0 {
		t.Errorf("temporary files left: %v", temps)
	}
}

// TestLongNames: a target whose base name has 255 bytes (the most a name
// may have) is written, its temporary files' names shortened by a hash;
// one of 256 bytes is refused by Check with a message that says why.
func TestLongNames(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{200, 201, 231, 255} {
		base := strings.Repeat("m", n-len(".json")) + ".json"
		path := filepath.Join(dir, base)
		if err := Check(path); err != nil {
			t.Fatalf("%d bytes: Check: %v", n, err)
		}
		if err := WriteBytes(path, 0o644, New, []byte("x")); err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if len(tempsIn(t, dir)) > 0 {
			t.Errorf("%d bytes: temporary files left", n)
		}
	}
	// Long names that share their first maxKey bytes have distinct keys.
	long := strings.Repeat("é", 120)
	if k1, k2 := tempKey(long+"a"), tempKey(long+"b"); k1 == k2 || len(k1) > maxKey {
		t.Errorf("keys %q and %q (%d bytes)", k1, k2, len(k1))
	}
	path := filepath.Join(dir, strings.Repeat("m", 256))
	err := Check(path)
	if !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), "256 bytes, above the 255") {
		t.Errorf("a 256-byte name: %v", err)
	}
	if err := WriteBytes(path, 0o644, New, []byte("x")); !errors.Is(err, ErrTarget) {
		t.Errorf("a 256-byte name written: %v", err)
	}
}

// deadPID returns the PID of a process of this machine that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.Pid()
}

// TestRemoveStale: Check removes the temporary files of its target left by
// a process of this machine that has exited, and any not modified for
// StaleAge; it keeps those of live writers (this process, its parent),
// those of another machine's writers, whose liveness it cannot see, and
// those of other targets.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.json")
	name := func(base string, pid int, hostTag string) string {
		return tempPrefix + tempKey(base) + "-" + strconv.Itoa(pid) + "." + hostTag + "-12345"
	}
	dead := deadPID(t)
	old := time.Now().Add(-StaleAge - time.Hour)
	files := []struct {
		name   string
		old    bool
		remove bool
	}{
		{name("model.json", dead, host()), false, true},
		{name("model.json", os.Getppid(), host()), false, false},
		{name("model.json", os.Getppid(), host()), true, true},
		{name("model.json", os.Getpid(), host()), false, false},
		{name("model.json", dead, "0badc0de"), false, false},
		{name("model.json", dead, "0badc0de"), true, true},
		{name("model.json-1", dead, host()), false, false},
		{name("model.json-1", dead, host()), true, false},
		{".stabpriv-tmp-model.json-x", true, false},
	}
	for i := range files {
		f := &files[i]
		if f.old {
			f.name += "0" // distinct from the fresh one
		}
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if f.old {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := Check(path); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		_, err := os.Stat(filepath.Join(dir, f.name))
		if removed := errors.Is(err, fs.ErrNotExist); removed != f.remove {
			t.Errorf("%s (old %v): removed %v, want %v", f.name, f.old, removed, f.remove)
		}
	}
}
