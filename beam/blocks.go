package stabbeam

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/stabpriv/stabpriv/datasets"
)

// Block is a range of a shard's lines that one worker reads: bytes
// [Offset, Offset+Length) of the file (Length < 0: to its end), holding
// the data rows First+1, First+2, ... of the shard. The block at Offset 0
// starts with the header.
type Block struct {
	Path, Name     string
	Offset, Length int64
	First          int
}

// where says, for an error in a block after the first, which block: its
// line numbers count from the block's first line (its data row numbers are
// the shard's).
func (b Block) where() string {
	if b.First == 0 {
		return ""
	}
	return fmt.Sprintf(" (in the block of %s from data row %d, byte %d: line numbers count from the block's first line)", b.Path, b.First+1, b.Offset)
}

// blockRows is the number of data rows of a block (a variable for the
// tests).
var blockRows = 1 << 20

// splitFn splits a shard into blocks of blockRows data rows, so that the
// rows of a large shard are parsed and mapped by several workers: it scans
// the file once (rowCuts: lines and quotes, no cell parsed) and cuts at the
// start of every blockRows-th data row. A row keeps its position (shard
// name, data row number in the shard): a block knows the rows before it.
// A quoted cell may hold line ends, so the scan knows at each line whether
// it is inside a quoted cell, and cuts only where a row starts; a shard
// whose quotes do not pair up (an unterminated quoted cell) is one block,
// whose read reports the error as the read of the whole file does.
type splitFn struct{}

func (splitFn) ProcessElement(ctx context.Context, shard ShardFile, emit func(Block)) error {
	whole := Block{Path: shard.Path, Name: shard.Name, Length: -1}
	if blockRows <= 0 {
		emit(whole)
		return nil
	}
	fsys, err := newFS(ctx, shard.Path)
	if err != nil {
		return fmt.Errorf("%w: shard %s: %w", ErrInput, shard.Path, err)
	}
	rc, err := fsys.OpenRead(ctx, shard.Path)
	fsys.Close()
	if err != nil {
		return fmt.Errorf("%w: shard %s: %w", ErrInput, shard.Path, err)
	}
	defer rc.Close()
	cuts, err := rowCuts(rc, blockRows)
	if err != nil {
		return fmt.Errorf("%w: shard %s: %w", ErrInput, shard.Path, err)
	}
	start := whole
	for _, c := range cuts {
		start.Length = c.Offset - start.Offset
		emit(start)
		start = Block{Path: shard.Path, Name: shard.Name, Offset: c.Offset, First: c.First, Length: -1}
	}
	emit(start)
	return nil
}

// cut is where a block starts: the byte offset of a data row's first line,
// and the data rows before it.
type cut struct {
	Offset int64
	First  int
}

// quote is the byte that opens and closes a quoted cell.
var quote = []byte{'"'}

// rowCuts scans CSV input (the header first) and returns where the data
// rows every, 2 every, ... start (none when the input has at most every
// data rows), following the reader's rule for records (datasets.TableReader,
// RFC 4180 as encoding/csv reads it): a line end is \n or \r\n (or a last
// \r); a line that starts outside a quoted cell starts a record unless it
// is empty; a record ends at the first line end outside a quoted cell.
//
// Whether a line end is inside a quoted cell is known only from the start
// of the input: in a file that encoding/csv reads without error every quote
// either opens a quoted cell, closes it, or is one of a doubled pair inside
// it, so a line end is inside a quoted cell exactly when an odd number of
// quotes precede it. The scan counts them (bytes.Count, no cell parsed).
// Input whose quotes do not pair up is malformed, and the scan then returns
// no cuts: one block, whose read fails with the reader's error. A file with
// an even count that encoding/csv refuses (a quote inside an unquoted cell,
// twice) may get cuts that are not row starts; the read of the block
// holding the first malformed record fails all the same, since every cut
// before it is a row start.
func rowCuts(r io.Reader, every int) ([]cut, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var cuts []cut
	var offset int64
	rows, header, inQuote := 0, false, false
	for {
		var n int64
		starts := !inQuote // the line starts a record, or is an empty line
		empty := false
		line, err := br.ReadSlice('\n')
		first := true
		for {
			n += int64(len(line))
			if bytes.IndexByte(line, '"') >= 0 && bytes.Count(line, quote)%2 == 1 {
				inQuote = !inQuote
			}
			if first {
				// The reader's rule: a line end is \n or \r\n (or a
				// last \r), and a line empty without it is no row.
				t := line
				if k := len(t); k > 0 && t[k-1] == '\n' {
					t = t[:k-1]
					if k := len(t); k > 0 && t[k-1] == '\r' {
						t = t[:k-1]
					}
				} else if k := len(t); err == io.EOF && k > 0 && t[k-1] == '\r' {
					t = t[:k-1]
				}
				empty, first = len(t) == 0, false
			}
			if err != bufio.ErrBufferFull {
				break
			}
			empty = false // a line longer than the buffer
			line, err = br.ReadSlice('\n')
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if starts && n > 0 && !empty {
			switch {
			case !header:
				header = true
			case rows%every == 0 && rows > 0:
				cuts = append(cuts, cut{Offset: offset, First: rows})
				rows++
			default:
				rows++
			}
		}
		offset += n
		if err == io.EOF {
			break
		}
	}
	if inQuote {
		return nil, nil
	}
	return cuts, nil
}

// openBlock opens a block of a shard for reading: the block at the file's
// start with its header (openShard), another after skipping to its offset,
// read as a file without a header whose columns are header.
func openBlock(ctx context.Context, b Block, header []string) (io.ReadCloser, *datasets.TableReader, error) {
	if b.Offset == 0 && b.Length < 0 {
		return openShard(ctx, b.Path)
	}
	fsys, err := newFS(ctx, b.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: shard %s: %w", ErrInput, b.Path, err)
	}
	rc, err := fsys.OpenRead(ctx, b.Path)
	fsys.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: shard %s: %w", ErrInput, b.Path, err)
	}
	if sk, ok := rc.(io.Seeker); ok {
		_, err = sk.Seek(b.Offset, io.SeekStart)
	} else {
		_, err = io.CopyN(io.Discard, rc, b.Offset)
	}
	if err != nil {
		rc.Close()
		return nil, nil, fmt.Errorf("%w: shard %s: to byte %d: %w", ErrInput, b.Path, b.Offset, err)
	}
	var r io.Reader = rc
	if b.Length >= 0 {
		r = io.LimitReader(rc, b.Length)
	}
	var tr *datasets.TableReader
	if b.Offset == 0 {
		tr, err = datasets.NewTableReader(bufio.NewReaderSize(r, 1<<16), b.Path)
	} else {
		tr, err = datasets.NewTableReaderHeader(bufio.NewReaderSize(r, 1<<16), b.Path, header)
	}
	if err != nil {
		rc.Close()
		return nil, nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{r, rc}, tr, nil
}
