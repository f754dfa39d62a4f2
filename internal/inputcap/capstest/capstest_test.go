package capstest

import (
	"io"
	"os"
	"testing"
)

func TestSparseFile(t *testing.T) {
	path := SparseFile(t, "f", "head", 1<<30)
	st, err := os.Stat(path)
	if err != nil || st.Size() != 1<<30 {
		t.Fatalf("%v, %v", st, err)
	}
	b := make([]byte, 6)
	f, _ := os.Open(path)
	defer f.Close()
	if _, err := io.ReadFull(f, b); err != nil || string(b) != "head\x00\x00" {
		t.Errorf("%q, %v", b, err)
	}
}

func TestEndless(t *testing.T) {
	b := make([]byte, 10)
	r := Endless("abc")
	io.ReadFull(r, b[:4])
	io.ReadFull(r, b[4:])
	if string(b) != "abcabcabca" {
		t.Errorf("%q", b)
	}
}
