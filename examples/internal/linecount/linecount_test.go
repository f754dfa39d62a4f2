package linecount

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCount(t *testing.T) {
	dir := t.TempDir()
	src := "package main\n\nfunc f() {\n\t" + Begin + "\n\ta := 1\n\n\t// a comment\n\t_ = a\n\t" + End + "\n\tb := 2\n}\n"
	path := filepath.Join(dir, "main.go")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := Count(path); err != nil || n != 2 {
		t.Errorf("Count = %d, %v; want 2", n, err)
	}
	if err := os.WriteFile(path, []byte("package main\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Count(path); err == nil {
		t.Error("no markers: no error")
	}
}
