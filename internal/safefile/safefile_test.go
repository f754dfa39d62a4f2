package safefile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stabpriv/stabpriv/internal/proctest"
)

func TestWriteReplacesRegularFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	for _, content := range []string{"first\n", "second, longer\n", ""} {
		if err := WriteBytes(path, 0o640, Replace, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read %q, %v; want %q", got, err, content)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
			t.Errorf("mode %v, want 0640", st.Mode().Perm())
		}
		if names := proctest.Entries(t, dir); len(names) != 1 {
			t.Errorf("files left beside the target: %v", names)
		}
	}
}

// TestWriteRefusesOtherTargets: a directory, a symbolic link (to a regular
// file or to a device), a FIFO and a device are refused and left as they
// were.
func TestWriteRefusesOtherTargets(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	link := filepath.Join(dir, "link")
	devlink := filepath.Join(dir, "devlink")
	fifo := filepath.Join(dir, "fifo")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(os.DevNull, devlink); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{sub, link, devlink, fifo, os.DevNull} {
		before, _ := os.Lstat(target)
		err := WriteBytes(target, 0o644, Replace, []byte("clobber"))
		if !errors.Is(err, ErrTarget) {
			t.Errorf("%s: %v, want ErrTarget", target, err)
		}
		after, err2 := os.Lstat(target)
		if err2 != nil || after.Mode() != before.Mode() {
			t.Errorf("%s changed: %v -> %v (%v)", target, before.Mode(), after.Mode(), err2)
		}
	}
	if got, _ := os.ReadFile(regular); string(got) != "keep" {
		t.Errorf("the link's target was written: %q", got)
	}
	for _, name := range proctest.Entries(t, dir) {
		if IsTemp(name) {
			t.Errorf("temporary file left: %s", name)
		}
	}
}

// TestWriteFailureKeepsTarget: an error of the writer after some bytes
// leaves the old file and no temporary file.
func TestWriteFailureKeepsTarget(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.json")
	if err := os.WriteFile(path, []byte("old model"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("row 7 is bad")
	err := Write(path, 0o644, Replace, func(w io.Writer) error {
		io.WriteString(w, "half of the new file")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("%v, want the writer's error", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old model" {
		t.Errorf("target changed to %q", got)
	}
	if names := proctest.Entries(t, dir); len(names) != 1 {
		t.Errorf("files left: %v", names)
	}
	if err := WriteBytes(filepath.Join(dir, "no", "such", "dir"), 0o644, New, nil); err == nil {
		t.Error("a missing directory was accepted")
	}
}

// childEnv makes the test binary a child that writes half a file and
// waits to be killed.
const childEnv = "STABPRIV_SAFEFILE_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		Write(path, 0o644, Replace, func(w io.Writer) error {
			w.Write(bytes.Repeat([]byte("new "), 1<<16))
			if f, ok := w.(*os.File); ok {
				f.Sync()
			}
			time.Sleep(time.Minute) // killed before it wakes
			return nil
		})
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// TestWriteKilled kills a process with SIGKILL in the middle of a write:
// the target is left byte for byte as it was.
func TestWriteKilled(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.json")
	old := []byte("the old model file\n")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the child's temporary file holds data.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var tmp os.FileInfo
		for _, name := range proctest.Entries(t, dir) {
			if IsTemp(name) && strings.Contains(name, "model.json") {
				tmp, _ = os.Stat(filepath.Join(dir, name))
			}
		}
		if tmp != nil && tmp.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child never wrote")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, old) {
		t.Errorf("after the kill the target is %q (%v), want %q", got, err, old)
	}
	// The killed writer's temporary file is left; the next Check of the
	// target removes it (its writer is no longer running).
	if temps := tempsIn(t, dir); len(temps) != 1 {
		t.Fatalf("after the kill: temporary files %v, want the killed writer's", temps)
	}
	if err := Check(path); err != nil {
		t.Fatal(err)
	}
	if temps := tempsIn(t, dir); len(temps) != 0 {
		t.Errorf("Check left the killed writer's temporary files %v", temps)
	}
}

// tempsIn returns the names of the temporary files in dir.
func tempsIn(t *testing.T, dir string) []string {
	t.Helper()
	var temps []string
	for _, name := range proctest.Entries(t, dir) {
		if IsTemp(name) {
			temps = append(temps, name)
		}
	}
	return temps
}

// TestAbandon: Abandon in the middle of a write removes its temporary file,
// the write then fails, and the target keeps its old content; Abandon
// lists the targets published before it, not the abandoned one.
func TestAbandon(t *testing.T) {
	dir := t.TempDir()
	// A file published before Abandon is listed as written.
	written := filepath.Join(dir, "written.csv")
	if err := WriteBytes(written, 0o644, New, []byte("written")); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(Abandon(), written) {
		t.Errorf("Abandon does not list %s, published before it", written)
	}
	path := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	started, resume := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- Write(path, 0o644, Replace, func(w io.Writer) error {
			io.WriteString(w, "new")
			close(started)
			<-resume
			return nil
		})
	}()
	<-started
	Abandon()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if IsTemp(e.Name()) {
			t.Errorf("temporary file %s left after Abandon", e.Name())
		}
	}
	close(resume)
	if err := <-done; err == nil {
		t.Error("the abandoned write succeeded")
	}
	if slices.Contains(Abandon(), path) {
		t.Errorf("Abandon lists %s as published", path)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "old" {
		t.Errorf("target after an abandoned write: %q, %v; want old", b, err)
	}
}
