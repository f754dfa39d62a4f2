package modelfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/internal/inputcap"
	"github.com/stabpriv/stabpriv/internal/safefile"
	"github.com/stabpriv/stabpriv/losses"
)

// Format names the format of the model files this package writes.
const Format = "stabpriv-model/2"

// ErrFile reports a model file that is malformed, or whose certificate
// does not verify (ErrVerify).
var ErrFile = errors.New("modelfile: invalid model file")

// modelFile is the JSON document of a model file: the format and the
// fields of Released.
type modelFile struct {
	Format string `json:"format"`
	*Released
}

// Write writes r as a model file (JSON, Format). Diagnostics are never
// written. A file larger than MaxFileBytes, which Read refuses, is not
// written: an error says so (fewer features, classes or principal
// directions make it smaller).
func (r *Released) Write(w io.Writer) error { return writeDoc(w, r.encode) }

// writeDoc writes the bytes of encode to w.
func writeDoc(w io.Writer, encode func() ([]byte, error)) error {
	data, err := encode()
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// encode returns the bytes Write writes.
func (r *Released) encode() ([]byte, error) {
	return encodeDoc(modelFile{Format: Format, Released: r}, "model file", ": use fewer features or classes")
}

// encodeDoc returns doc indented, with a final newline, or an error for a
// file (named by kind) larger than MaxFileBytes, which says what to do
// (advice).
func encodeDoc(doc any, kind, advice string) ([]byte, error) {
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("modelfile: encoding the %s: %w", kind, err)
	}
	if int64(len(data))+1 > maxFileBytes {
		return nil, fmt.Errorf("modelfile: the %s would be %s, more than the %s its readers accept%s",
			kind, inputcap.Size(int64(len(data))+1), inputcap.Size(maxFileBytes), advice)
	}
	return append(data, '\n'), nil
}

// WriteFile writes r to path with Write, creating the parent directories.
// The file appears whole or not at all (internal/safefile): it is written
// to a temporary file in the same directory and renamed, and a path that
// exists and is not a regular file (a device, a FIFO, a directory, a
// symbolic link) is refused. Without replace, a file at path is never
// replaced: the rename fails if one appeared meanwhile (of concurrent
// writers to a new path exactly one succeeds; the others' errors wrap
// fs.ErrExist). Whatever was at path is left as it was on any error.
func (r *Released) WriteFile(path string, replace bool) error {
	return writeFile(path, replace, r.Write)
}

// writeFile writes path by write as Released.WriteFile says.
func writeFile(path string, replace bool, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	mode := safefile.New
	if replace {
		mode = safefile.Replace
	}
	return safefile.Write(path, 0o644, mode, write)
}

// MaxFileBytes is the most bytes of a model file: Read refuses a larger
// one (a regular file from its size, before it is read; a stream once it
// passes the cap), and Write does not write one. The largest part of a
// file a run can write is the principal directions of --pca, at most 2000
// of 2000 entries (dppca.MaxColumns), about 124 MiB as Write writes random
// unit directions; the cap leaves room for longer numbers and the rest of
// the file. A stream is held up to the cap before it is refused.
const MaxFileBytes = 160 << 20

// maxFileBytes is MaxFileBytes, lowered by the tests.
var maxFileBytes int64 = MaxFileBytes

// head is how every file Write writes starts: Read refuses another start
// before it reads further.
const head = "{\n  \"format\": \""

// Read reads a model file and checks its structure: the format, a
// model whose shape matches the preprocessing and the classes, finite
// weights, names a model file holds (datasets.CheckName), no field beyond
// those this package writes, and that the file is byte for byte what Write
// writes for the values read. It does not verify the certificate (Verify
// does). Errors wrap ErrFile. Input that does not start as Write starts a
// file, or larger than MaxFileBytes, is refused before more of it is
// read.
//
// The last check makes the values the whole content: a key written twice
// or in another case (which encoding/json folds into one value), digits
// beyond those that give a weight, other spacing or anything after the
// document could carry information that no check of the values sees.
func Read(rd io.Reader) (*Released, error) {
	data, err := readData(rd)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Format string `json:"format"`
		Released
	}
	r := &doc.Released
	if err := decode(data, &doc, &doc.Format, Format, "stabpriv model file", r.checkShape, r.encode); err != nil {
		return nil, err
	}
	return r, nil
}

// decode decodes data into doc, whose format field is *format, and
// refuses a field beyond those doc has, a format other than want, values
// that check refuses, and bytes other than those encode writes for the
// values read. kind names the file in a message.
func decode(data []byte, doc any, format *string, want, kind string, check func() error, encode func() ([]byte, error)) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	// A field this package does not write could carry anything, a
	// statistic of the data included: such a file is refused.
	dec.DisallowUnknownFields()
	if err := dec.Decode(doc); err != nil {
		return fmt.Errorf("%w: not a %s (%w)", ErrFile, kind, err)
	}
	if *format != want {
		return fmt.Errorf("%w: format %q, want %q (a file of another program or version)", ErrFile, *format, want)
	}
	if err := check(); err != nil {
		return err
	}
	canon, err := encode()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrFile, err)
	}
	if !bytes.Equal(canon, data) {
		return fmt.Errorf("%w: not in the form stabpriv writes (%s): its bytes could carry what no check of the values sees", ErrFile, firstDiff(data, canon))
	}
	return nil
}

// readData reads the bytes of a file this package writes (a model file or
// a graph's release file): input that does not start as Write starts a
// file, or larger than MaxFileBytes, is refused before more of it is read,
// and so are weights that are not laid out one a line.
func readData(rd io.Reader) ([]byte, error) {
	if _, regular := inputcap.RegularSize(rd); !regular {
		// A stream: its start first, so that another file (/dev/zero)
		// is refused at once.
		start := make([]byte, len(head))
		n, err := io.ReadFull(rd, start)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("%w: %w", ErrFile, err)
		}
		if err := checkHead(start[:n]); err != nil {
			return nil, err
		}
		rd = io.MultiReader(bytes.NewReader(start[:n]), rd)
	}
	data, err := inputcap.ReadAll(rd, inputcap.Caps{Kind: "model file", Bytes: maxFileBytes})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFile, err)
	}
	if err := checkHead(data); err != nil {
		return nil, err
	}
	if err := checkWeightLines(data); err != nil {
		return nil, err
	}
	return data, nil
}

// checkHead refuses data whose start is not the start of every model file.
func checkHead(data []byte) error {
	n := min(len(data), len(head))
	if len(data) == 0 {
		return fmt.Errorf("%w: not a stabpriv model file: it is empty", ErrFile)
	}
	if string(data[:n]) != head[:n] {
		return fmt.Errorf("%w: not a stabpriv model file: it starts with %s, a model file with %q", ErrFile, quoteStart(data), head)
	}
	return nil
}

// quoteStart quotes the first bytes of data for a message.
func quoteStart(data []byte) string {
	if len(data) > len(head) {
		return strconv.Quote(string(data[:len(head)])) + "..."
	}
	return strconv.Quote(string(data))
}

// firstDiff describes where got first differs from want: the line and
// the text of both there.
func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	line := 1 + bytes.Count(got[:i], []byte("\n"))
	snip := func(b []byte) string {
		end := min(len(b), i+40)
		return strconv.Quote(string(b[i:end]))
	}
	return fmt.Sprintf("line %d: the file has %s where %s is expected", line, snip(got), snip(want))
}

// ReadFile reads the model file at path with Read: a directory, or a
// regular file larger than MaxFileBytes, is refused before it is read.
func ReadFile(path string) (*Released, error) { return readFile(path, Read) }

// readFile reads the file at path with read, as ReadFile says.
func readFile[T any](path string, read func(io.Reader) (*T, error)) (*T, error) {
	f, err := inputcap.Open(path, inputcap.Caps{Kind: "model file", Bytes: maxFileBytes})
	if errors.Is(err, inputcap.ErrCap) {
		return nil, fmt.Errorf("%w: %w", ErrFile, err)
	}
	if err != nil {
		return nil, fmt.Errorf("modelfile: %w", err)
	}
	defer f.Close()
	r, err := read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// task returns the task of the model's loss.
func (r *Released) task() (losses.Task, error) {
	l, err := losses.ByName(r.Model.Loss)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrFile, err)
	}
	return l.Task(), nil
}

// checkShape checks that the parts of r fit together.
func (r *Released) checkShape() error {
	m := r.Model
	if m == nil {
		return fmt.Errorf("%w: no model", ErrFile)
	}
	if m.K < 1 || m.D < 1 || len(m.W) != m.K*m.D {
		return fmt.Errorf("%w: model is %d x %d with %d weights", ErrFile, m.K, m.D, len(m.W))
	}
	for i, v := range m.W {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: weight %d is %v", ErrFile, i, v)
		}
	}
	if r.Preprocessing == nil {
		return fmt.Errorf("%w: no preprocessing", ErrFile)
	}
	if err := r.checkNames(); err != nil {
		return err
	}
	if err := r.Preprocessing.Check(); err != nil {
		return fmt.Errorf("%w: %w", ErrFile, err)
	}
	if d := r.Preprocessing.Dim(); d != m.D {
		return fmt.Errorf("%w: the preprocessing gives %d inputs, the model has %d", ErrFile, d, m.D)
	}
	task, err := r.task()
	if err != nil {
		return err
	}
	if task.String() != m.Task.String() {
		return fmt.Errorf("%w: loss %s is %v but the model says %v", ErrFile, m.Loss, task, m.Task)
	}
	k := len(r.Schema.Classes)
	switch {
	case task == losses.Binary && (k != 2 || m.K != 1),
		task == losses.Multiclass && (k < 2 || m.K != k),
		task == losses.Regression && (k != 0 || m.K != 1):
		return fmt.Errorf("%w: %v model with %d outputs and %d classes", ErrFile, task, m.K, k)
	}
	return nil
}

// IsModelFile reports whether the file at path starts as a model file of
// this package does (a JSON object whose first field is the format of a
// stabpriv model file): a command that writes other outputs refuses to
// replace it.
func IsModelFile(path string) bool {
	// Only a regular file is opened: opening a FIFO would block.
	s := strings.Join(strings.Fields(string(safefile.Head(path, 256))), "")
	return strings.HasPrefix(s, `{"format":"stabpriv-model/`)
}

// checkNames checks every name r holds (the schema's, the features',
// the categories', the shards' and the privacy-ID column's) by the rule
// of the inputs that bring them (datasets.CheckName), so that a model file
// and train accept the same names.
func (r *Released) checkNames() error {
	check := func(what string, names ...string) error {
		for _, name := range names {
			if err := datasets.CheckName(name); err != nil {
				return fmt.Errorf("%w: %s %w", ErrFile, what, err)
			}
		}
		return nil
	}
	s, p := r.Schema, r.Preprocessing
	errs := []error{check("label", s.Label), check("class", s.Classes...), check("feature", p.Features...)}
	for _, b := range s.Bounds {
		errs = append(errs, check("bounded column", b.Column))
	}
	for _, c := range slices.Concat(s.Categories, p.Categories) {
		errs = append(errs, check("categorical column", c.Column), check("category", c.Values...))
	}
	if info := r.Partitions; info != nil {
		errs = append(errs, check("privacy-ID column", info.PrivacyID))
		for _, sh := range info.Shards {
			errs = append(errs, check("shard", sh.Name))
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkWeightLines refuses, before the file is decoded, a model whose
// weights are not k x d lines as Write lays them out (one weight a line,
// after the model's "k" and "d"): a file of millions of weights within the
// byte cap would otherwise be decoded whole before its shape is checked.
// A file that is not in Write's layout is left to the decoder and the
// canonical check.
func checkWeightLines(data []byte) error {
	k, okK := layoutInt(data, "\n    \"k\": ")
	d, okD := layoutInt(data, "\n    \"d\": ")
	i := bytes.Index(data, []byte("\n    \"w\": ["))
	if !okK || !okD || i < 0 {
		return nil
	}
	w := data[i+len("\n    \"w\": ["):]
	end := bytes.IndexByte(w, ']') // no weight holds one
	if end < 0 {
		end = len(w)
	}
	if lines := bytes.Count(w[:end], []byte("\n")) - 1; k > 0 && d > 0 && lines != k*d {
		return fmt.Errorf("%w: the model is %d x %d, but its weights are not %d lines as train writes them (%d)", ErrFile, k, d, k*d, lines)
	}
	return nil
}

// layoutInt reads the non-negative integer after the first key in data.
func layoutInt(data []byte, key string) (int, bool) {
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return 0, false
	}
	v := 0
	j := i + len(key)
	for ; j < len(data) && data[j] >= '0' && data[j] <= '9' && v < 1<<40; j++ {
		v = 10*v + int(data[j]-'0')
	}
	return v, j > i+len(key)
}
