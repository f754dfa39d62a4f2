package partition

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/stabpriv/stabpriv/datasets"
)

// ErrNotShard reports an input file that is not a CSV shard at all (a
// model file, other JSON, a binary file), such as the model file of an
// earlier run written where the input pattern matches it. It wraps
// datasets.ErrFormat.
var ErrNotShard = fmt.Errorf("%w: not a CSV shard", datasets.ErrFormat)

// HeadBytes is how many leading bytes of a file CheckShardHead reads.
const HeadBytes = 512

// CheckShardHead checks the first bytes head (up to HeadBytes) of the
// input file name before it is parsed, looking at its first line alone
// (after a byte-order mark and empty lines, which the reader skips too):
// the header, which neighbouring tables share, so that the check reads no
// row. A first line that no CSV header can be is refused: "{" or "["
// alone (as a model file begins), `{"` or `["` at its start (a bare quote,
// which the CSV reader refuses too), a NUL byte, or gzip's magic number.
// The error, wrapping ErrNotShard, says what the file looks like and how
// to leave it out of the pattern (or to write model files outside the
// input directory). A CSV header whose first name starts
// with brackets ("[a],b,y", "[[a]],b,y") passes. A table without a header
// row (train's --header) is not checked: its first line is a data row.
func CheckShardHead(name string, head []byte) error {
	head = head[:min(len(head), HeadBytes)]
	s := bytes.TrimPrefix(head, []byte("\ufeff"))
	for len(s) > 0 && (s[0] == '\n' || bytes.HasPrefix(s, []byte("\r\n"))) {
		s = s[bytes.IndexByte(s, '\n')+1:]
	}
	line, _, _ := bytes.Cut(s, []byte("\n"))
	line = bytes.Trim(line, " \t\r")
	what := ""
	switch {
	case string(line) == "{" || string(line) == "[" || hasAnyPrefix(line, `{"`, `["`):
		what = "a JSON file (such as a stabpriv model file: the --out of an earlier run?)"
	case bytes.IndexByte(line, 0) >= 0 || bytes.HasPrefix(head, []byte("\x1f\x8b")):
		what = "a binary file"
	default:
		return nil
	}
	return fmt.Errorf("%w: %s looks like %s: narrow the input pattern to the CSV files (e.g. 'dir/*.csv') or write model files elsewhere", ErrNotShard, name, what)
}

func hasAnyPrefix(b []byte, prefixes ...string) bool {
	for _, p := range prefixes {
		if bytes.HasPrefix(b, []byte(p)) {
			return true
		}
	}
	return false
}

// CheckShardFile is CheckShardHead for the local regular file at path,
// reading its first HeadBytes bytes. A file it cannot open or read, or that
// is not a regular file (a pipe), passes: the reader reports it.
func CheckShardFile(path string) error {
	// Only a regular file: the bytes read from a pipe would be lost to
	// the reader.
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
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
