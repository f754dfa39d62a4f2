// Package safefile writes output files so that nothing is lost: a file
// appears whole or not at all, and a target that exists and is not a
// regular file (a device, a FIFO, a directory, a symbolic link) is refused
// rather than replaced.
//
// Write puts the data in a temporary file in the target's directory,
// flushes it to disk and renames it over the target only when every byte
// was written; on any failure (an error of the writer, a full disk, the
// process killed) the temporary file is all that can remain, and the target
// is byte for byte as it was. A rename within one directory is atomic on
// POSIX file systems.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// ErrTarget is wrapped by every refusal of a target path.
var ErrTarget = errors.New("safefile: refused target")

// tempPrefix starts the names of the temporary files Write creates.
const tempPrefix = ".stabpriv-tmp-"

// Check returns an error wrapping ErrTarget when path exists and is not a
// regular file (a symbolic link is refused whatever it points to), and an
// error when its directory does not exist or cannot hold a new file. It
// writes nothing that remains: a command checks its outputs with it before
// any work.
func Check(path string) error {
	if path == "" {
		return fmt.Errorf("%w: no path", ErrTarget)
	}
	st, err := os.Lstat(path)
	switch {
	case err == nil && !st.Mode().IsRegular():
		return fmt.Errorf("%w: %s exists and is not a regular file (%s); give the path of a new or regular file", ErrTarget, path, kind(st.Mode()))
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, tempPrefix+"check-*")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// kind names the type of a file mode.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// Write writes the file at path with write, atomically, with permissions
// perm: the target is checked (Check), the data goes to a temporary file in
// the same directory, which is synced and renamed over path when write and
// the close succeed. Otherwise the temporary file is removed and path is
// left as it was. The parent directory must exist.
func Write(path string, perm fs.FileMode, write func(io.Writer) error) error {
	return WriteAll([]File{{Path: path, Perm: perm, Write: write}})
}

// File is one file of WriteAll: its path, permissions and contents.
type File struct {
	Path  string
	Perm  fs.FileMode
	Write func(io.Writer) error
}

// WriteAll writes several files as Write writes one, so that a failure
// leaves every target as it was: every target is checked and written to a
// temporary file first, and the temporary files are renamed into place only
// when all of them were written. (A rename that fails after others
// succeeded, which needs the directory to change under the process, can
// leave some targets replaced.)
func WriteAll(files []File) (err error) {
	for _, f := range files {
		if err := Check(f.Path); err != nil {
			return err
		}
	}
	tmps := make([]string, 0, len(files))
	defer func() {
		for _, t := range tmps {
			if err != nil {
				os.Remove(t)
			}
			track(t, true)
		}
	}()
	for _, f := range files {
		t, err := writeTemp(f)
		if t != "" {
			tmps = append(tmps, t)
		}
		if err != nil {
			return err
		}
	}
	for i, f := range files {
		if err := Check(f.Path); err != nil {
			return err
		}
		if err := os.Rename(tmps[i], f.Path); err != nil {
			return err
		}
	}
	return nil
}

// temps are the temporary files of the writes in progress, for Abandon.
var temps struct {
	sync.Mutex
	names map[string]bool
}

// track adds (or with done, removes) a temporary file of a write in
// progress.
func track(name string, done bool) {
	temps.Lock()
	defer temps.Unlock()
	if done {
		delete(temps.names, name)
		return
	}
	if temps.names == nil {
		temps.names = make(map[string]bool)
	}
	temps.names[name] = true
}

// Abandon removes the temporary files of the writes in progress, for a
// process about to exit in the middle of them (an interrupt): their targets
// stay as they were, or, for a WriteAll whose renames had begun, some are
// replaced whole.
func Abandon() {
	temps.Lock()
	defer temps.Unlock()
	for name := range temps.names {
		os.Remove(name)
	}
	clear(temps.names)
}

// writeTemp writes f to a new temporary file in its directory, synced and
// closed, and returns its name (also on error, when it was created).
func writeTemp(f File) (string, error) {
	tf, err := os.CreateTemp(filepath.Dir(f.Path), tempPrefix+filepath.Base(f.Path)+"-*")
	if err != nil {
		return "", err
	}
	track(tf.Name(), false)
	err = f.Write(tf)
	if err == nil {
		err = tf.Sync()
	}
	if err == nil {
		err = tf.Chmod(f.Perm)
	}
	if cerr := tf.Close(); err == nil {
		err = cerr
	}
	return tf.Name(), err
}

// WriteBytes writes data to path with Write.
func WriteBytes(path string, perm fs.FileMode, data []byte) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// IsTemp reports whether name is the base name of a temporary file of
// Write or Check.
func IsTemp(name string) bool { return strings.HasPrefix(name, tempPrefix) }

// Head returns the first n bytes of the regular file at path (fewer when
// it is shorter), or nil when path is not a regular file (it does not
// follow a symbolic link, and never opens a FIFO, which would block) or
// cannot be read: what a command reads to recognise one of its own files.
func Head(path string, n int) []byte {
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, n)
	k, _ := io.ReadFull(f, head)
	return head[:k]
}
