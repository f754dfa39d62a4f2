package inputcap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrCap is matched (errors.Is) by the error of an input beyond one of its
// caps.
var ErrCap = errors.New("input beyond its cap")

// capError is the error of an input beyond a cap: its message alone, and
// it is ErrCap.
type capError struct{ msg string }

func (e *capError) Error() string        { return e.msg }
func (e *capError) Is(target error) bool { return target == ErrCap }

// capf returns a capError with a formatted message.
func capf(format string, args ...any) error { return &capError{fmt.Sprintf(format, args...)} }

// Caps are the limits of one kind of input. Every zero value means no
// cap of that kind.
type Caps struct {
	// Kind names the input in messages ("bounds file").
	Kind string
	// Bytes is the most bytes the input may hold.
	Bytes int64
	// Line is the most bytes of one line, its line end (\n) not counted.
	Line int64
	// Lines is the most lines, a last line without a line end counted.
	Lines int64
}

// Size formats a number of bytes for messages: in KiB, MiB or GiB when it
// is a whole number of them (as the caps are), else with one decimal.
func Size(n int64) string {
	for _, u := range []struct {
		unit string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		switch {
		case n >= u.size && n%u.size == 0:
			return fmt.Sprintf("%d %s", n/u.size, u.unit)
		case n >= u.size:
			return fmt.Sprintf("%.1f %s", float64(n)/float64(u.size), u.unit)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// Open opens the file at path for reading and checks it against c before
// a byte is read: a directory is refused, and so is a regular file larger
// than c.Bytes. Any other file (a FIFO, a device) is opened as it is:
// read it through NewReader or ReadAll, which stop at the caps. Errors
// beyond a cap wrap ErrCap.
func Open(path string, c Caps) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch {
	case st.IsDir():
		f.Close()
		return nil, fmt.Errorf("%s is a directory, not a %s", path, c.Kind)
	case st.Mode().IsRegular() && c.Bytes > 0 && st.Size() > c.Bytes:
		f.Close()
		return nil, capf("%s: %s, more than the %s a %s may hold: is it the right file?", path, Size(st.Size()), Size(c.Bytes), c.Kind)
	}
	return f, nil
}

// Reader passes on the bytes of its reader until they pass one of its
// caps; it then fails with an error wrapping ErrCap (the bytes of the read
// that passed it are not passed on), and fails so on every later read. It
// never asks its reader for more than one byte beyond the byte cap.
type Reader struct {
	r     io.Reader
	c     Caps
	n     int64 // bytes passed on
	lines int64 // line ends passed on
	run   int64 // bytes since the last line end
	err   error
}

// NewReader returns a Reader of r under the caps c.
func NewReader(r io.Reader, c Caps) *Reader { return &Reader{r: r, c: c} }

// Read reads from the underlying reader and checks what it read.
func (r *Reader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.c.Bytes > 0 && int64(len(p)) > r.c.Bytes-r.n+1 {
		p = p[:r.c.Bytes-r.n+1]
	}
	n, err := r.r.Read(p)
	if cerr := r.check(p[:n]); cerr != nil {
		r.err = cerr
		return 0, cerr
	}
	return n, err
}

// Lines returns the number of lines passed on so far, a last line without
// its line end counted.
func (r *Reader) Lines() int64 {
	if r.run > 0 {
		return r.lines + 1
	}
	return r.lines
}

// check counts the bytes b that were read and returns the error of the
// first cap they pass.
func (r *Reader) check(b []byte) error {
	r.n += int64(len(b))
	if r.c.Bytes > 0 && r.n > r.c.Bytes {
		return capf("more than %s, the most a %s may hold: is it the right file?", Size(r.c.Bytes), r.c.Kind)
	}
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		r.run += int64(len(b))
	} else {
		if err := r.checkLine(r.run + int64(i)); err != nil {
			return err
		}
		r.lines++
		rest := b[i+1:]
		if r.c.Line > 0 && int64(len(rest)) > r.c.Line {
			// A whole line inside b may pass the cap: check each.
			for {
				j := bytes.IndexByte(rest, '\n')
				if j < 0 {
					break
				}
				if err := r.checkLine(int64(j)); err != nil {
					return err
				}
				r.lines++
				rest = rest[j+1:]
			}
		} else {
			r.lines += int64(bytes.Count(rest, newline))
		}
		r.run = int64(len(b) - 1 - bytes.LastIndexByte(b, '\n'))
	}
	if err := r.checkLine(r.run); err != nil {
		return err
	}
	if r.c.Lines > 0 && r.Lines() > r.c.Lines {
		return capf("more than %d lines, the most a %s may hold: is it the right file?", r.c.Lines, r.c.Kind)
	}
	return nil
}

var newline = []byte{'\n'}

// checkLine checks the length n of the line after the r.lines line ends
// passed on (it may go on).
func (r *Reader) checkLine(n int64) error {
	if r.c.Line > 0 && n > r.c.Line {
		return capf("line %d is longer than %s, the most a line of a %s may hold: is it the right file?", r.lines+1, Size(r.c.Line), r.c.Kind)
	}
	return nil
}

// The pieces ReadAll reads a stream in: the first of firstPiece bytes,
// each next twice as large, up to maxPiece.
const (
	firstPiece = 64 << 10
	maxPiece   = 4 << 20
)

// ReadAll reads r to its end under the caps c (c.Bytes > 0) and returns
// its bytes. The input is never held beyond the byte cap: a regular file
// (an *os.File, read from its offset) is checked against the cap from its
// size and read into one buffer of that size, any other reader in pieces
// of 64 KiB to 4 MiB, joined once its end is reached.
func ReadAll(r io.Reader, c Caps) ([]byte, error) {
	if c.Bytes <= 0 {
		panic("inputcap: ReadAll without a byte cap")
	}
	cr := NewReader(r, c)
	if size, ok := RegularSize(r); ok {
		if size > c.Bytes {
			return nil, capf("%s, more than the %s a %s may hold: is it the right file?", Size(size), Size(c.Bytes), c.Kind)
		}
		// One byte more than the size, to see the end (or a file that grew).
		buf := make([]byte, 0, size+1)
		for {
			n, err := cr.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			switch {
			case err == io.EOF:
				return buf, nil
			case err != nil:
				return nil, err
			case len(buf) == cap(buf):
				buf = append(buf, 0)[:len(buf)] // the file grew: go on
			}
		}
	}
	var pieces [][]byte
	total, size := 0, firstPiece
	for ; ; size = min(2*size, maxPiece) {
		piece := make([]byte, size)
		n, err := io.ReadFull(cr, piece)
		pieces = append(pieces, piece[:n])
		total += n
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(pieces) == 1 {
		return pieces[0], nil
	}
	out := make([]byte, 0, total)
	for _, p := range pieces {
		out = append(out, p...)
	}
	return out, nil
}

// RegularSize returns the bytes left in r and true when r is a regular
// file (an *os.File), and false for any other reader (a stream).
func RegularSize(r io.Reader) (int64, bool) {
	f, ok := r.(*os.File)
	if !ok {
		return 0, false
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0, false
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, false
	}
	return max(0, st.Size()-off), true
}
