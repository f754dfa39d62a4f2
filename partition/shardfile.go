package partition

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/modelfile"
)

// ErrNotShard reports an input file that is not a CSV shard at all (a
// model file, other JSON, a binary file), such as the model file of an
// earlier run written where the input pattern matches it. It wraps
// datasets.ErrFormat.
var ErrNotShard = fmt.Errorf("%w: not a CSV shard", datasets.ErrFormat)

// HeadBytes is how many leading bytes of a file CheckShardHead reads.
const HeadBytes = 512

// CheckShardHead checks the first bytes head (up to HeadBytes) of the
// input file name before it is parsed: a file whose first character (after
// a byte-order mark and white space) opens a JSON object or array, or that
// holds a NUL byte, is not a CSV shard, and the error, wrapping
// ErrNotShard, says what it looks like (a stabpriv model file when it
// names the model file format) and how to leave it out of the pattern.
// It reads no row: a CSV header cannot start so.
func CheckShardHead(name string, head []byte) error {
	head = head[:min(len(head), HeadBytes)]
	s := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\ufeff")), " \t\r\n")
	what := ""
	switch {
	case len(s) > 0 && (s[0] == '{' || s[0] == '['):
		what = "a JSON file"
		prefix, _, _ := strings.Cut(modelfile.Format, "/")
		if bytes.Contains(s, []byte(`"format": "`+prefix+"/")) || bytes.Contains(s, []byte(`"format":"`+prefix+"/")) {
			what = "a stabpriv model file (" + modelfile.Format + ", JSON), perhaps the --out of an earlier run"
		}
	case bytes.IndexByte(head, 0) >= 0:
		what = "a binary file"
	default:
		return nil
	}
	return fmt.Errorf("%w: %s looks like %s: narrow the input pattern to the CSV files (e.g. 'dir/*.csv') or write model files outside the input directory", ErrNotShard, name, what)
}

// CheckShardFile is CheckShardHead for the local file at path, reading
// its first HeadBytes bytes. A file it cannot open or read passes: the
// reader reports it.
func CheckShardFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, HeadBytes)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil
	}
	return CheckShardHead(path, head[:n])
}
