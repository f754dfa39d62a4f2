package modelfile_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/modelfile"
)

// addModelSeeds adds the pinned model files of the command's tests and the
// golden file to the corpus of f, with a few inputs that are not model
// files.
func addModelSeeds(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "cmd", "stabpriv", "testdata", "pinned", "*.json"))
	seeds = append(seeds, filepath.Join("testdata", "model.golden.json"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"format":"stabpriv-model/2"}`))
	f.Add([]byte("{\n  \"format\": \"stabpriv-model/2\"\n}\n"))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
}

// FuzzRead: any bytes are read or refused with an error wrapping ErrFile,
// never a panic; a file that reads is exactly what Write writes for its
// values, and every name it holds is one train accepts.
func FuzzRead(f *testing.F) {
	addModelSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := modelfile.Read(bytes.NewReader(in))
		if err != nil {
			if !strings.Contains(err.Error(), modelfile.ErrFile.Error()) {
				t.Fatalf("error %v does not wrap ErrFile", err)
			}
			return
		}
		var out bytes.Buffer
		if err := r.Write(&out); err != nil || !bytes.Equal(out.Bytes(), in) {
			t.Fatalf("a file that reads is not what Write writes for its values (%v)", err)
		}
		for _, name := range append(append([]string{r.Schema.Label}, r.Schema.Classes...), r.Preprocessing.Features...) {
			if err := datasets.CheckName(name); err != nil {
				t.Fatalf("a file that reads holds a name train refuses: %v", err)
			}
		}
	})
}

// maxFuzzCount bounds the counts (rows, passes, sizes, settings) of a file
// that FuzzReadVerify verifies: Verify's work grows with them (a file that
// claims 10^8 SGD steps is analysed step by step, for seconds), and slow
// executions would stall the fuzzer.
const maxFuzzCount = 100_000

// small reports whether every whole number in the JSON document data is
// at most maxFuzzCount in absolute value.
func small(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return true // the end, or Read refuses the file
		}
		if n, ok := tok.(json.Number); ok {
			if i, err := n.Int64(); err == nil && (i > maxFuzzCount || i < -maxFuzzCount) {
				return false
			}
			if s := n.String(); !strings.ContainsAny(s, ".eE") && len(s) > 7 {
				return false // beyond int64
			}
		}
	}
}

// FuzzReadVerify: a model file that reads and claims little work is
// verified or refused with an error wrapping ErrFile, never a panic; a
// file that verifies keeps its verdict when written and read again, and
// its certificate binds its weights.
func FuzzReadVerify(f *testing.F) {
	addModelSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := modelfile.Read(bytes.NewReader(in))
		if err != nil || !small(in) {
			return
		}
		v, _, err := modelfile.Verify(r)
		if err != nil {
			if !strings.Contains(err.Error(), modelfile.ErrFile.Error()) {
				t.Fatalf("error %v does not wrap ErrFile", err)
			}
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
