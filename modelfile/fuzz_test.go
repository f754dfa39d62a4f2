package modelfile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
)

// FuzzReadVerify: any bytes are read and verified, or refused with an
// error wrapping ErrFile, never a panic; a file that verifies keeps its
// verdict when written and read again, and its certificate binds its
// weights.
func FuzzReadVerify(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "cmd", "stabpriv", "testdata", "pinned", "*.json"))
	seeds = append(seeds, filepath.Join("testdata", "model.golden.json"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"format":"stabpriv-model/2"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := modelfile.Read(bytes.NewReader(in))
		if err != nil {
			return
		}
		v, _, err := modelfile.Verify(r)
		if err != nil {
			return
		}
		if c := r.Certificate; c != nil && c.WeightsSHA256 != dp.WeightsSHA256(r.Model.W) {
			t.Fatal("a verified file's certificate does not bind its weights")
		}
		var out bytes.Buffer
		if err := r.Write(&out); err != nil {
			t.Fatal(err)
		}
		back, err := modelfile.Read(&out)
		if err != nil {
			t.Fatalf("a verified file does not read back: %v", err)
		}
		if v2, _, err := modelfile.Verify(back); err != nil || v2 != v {
			t.Fatalf("verdict %v, after a round trip %v (%v)", v, v2, err)
		}
	})
}
