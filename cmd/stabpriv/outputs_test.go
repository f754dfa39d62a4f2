package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOutputsNeverClobber: train's --out refuses a FIFO, a directory, a
// symbolic link and a model file (but with --force), pdp's and sweep's
// --out a file; each refusal is a usage error that leaves the file system
// as it was.
func TestOutputsNeverClobber(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model.json")
	if _, _, err := call(t, "train", "--out", model); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(model)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(model, link); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(plain, []byte("notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"train", "--out", model},
		{"train", "--out", fifo},
		{"train", "--out", link},
		{"train", "--out", dir},
		{"train", "--out", os.DevNull},
		{"pdp", "--out", plain},
		{"sweep", "--dataset", "csv", "--data", "x.csv", "--label", "y", "--out", plain},
	} {
		_, _, err := call(t, args...)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if after, _ := os.ReadFile(model); !bytes.Equal(after, before) {
		t.Error("the model file changed")
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Error("the FIFO changed")
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link changed")
	}
	if _, _, err := call(t, "train", "--out", model, "--force", "--seed", "2"); err != nil {
		t.Errorf("--force: %v", err)
	}
	if after, _ := os.ReadFile(model); bytes.Equal(after, before) {
		t.Error("--force did not replace the model file")
	}
}
