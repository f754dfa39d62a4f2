// Package safefile writes output files so that nothing is lost: a file
// appears whole or not at all, a target that exists and is not a regular
// file (a device, a FIFO, a directory, a symbolic link) is refused rather
// than replaced, and a write that must not replace a file (New) publishes
// only where no file is, so that of concurrent writers to one new path
// exactly one succeeds.
//
// Write puts the data in a temporary file in the target's directory,
// flushes it to disk and publishes it at the target only when every byte
// was written: Replace renames it over the target; New renames it with
// renameat2's RENAME_NOREPLACE on Linux, or links it to the target and
// unlinks it where that flag is not supported (another system, a file
// system without it). Both are atomic on POSIX file systems. On any failure
// (an error of the writer, a full disk, the process killed) the temporary
// file is all that can remain, and the target is byte for byte as it was.
//
// A temporary file is named .stabpriv-tmp-KEY-PID.HOST-N, with KEY the
// target's base name (cut and hashed when it is long, so that the name fits
// the 255 bytes a name may have), PID and HOST the writing process and
// machine, and N random. Check, which every command runs on its outputs
// before any work, removes those of its own target that a killed process
// left: those of a process of this machine that is no longer running, and
// any not modified for StaleAge. A temporary file of a live writer is never
// removed (but one stopped for StaleAge).
package safefile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// ErrTarget is wrapped by every refusal of a target path.
var ErrTarget = errors.New("safefile: refused target")

// ErrExists is matched (errors.Is) by the error of a New write whose
// target exists when it is published (another writer published it first),
// as are ErrTarget and fs.ErrExist.
var ErrExists = errors.New("safefile: the target exists")

// existsError is the error of a New write whose target exists: before
// the write began, or since (appeared).
type existsError struct {
	path     string
	appeared bool
}

func (e *existsError) Error() string {
	if !e.appeared {
		return fmt.Sprintf("%v: %s exists, and this write may not replace a file", ErrTarget, e.path)
	}
	return fmt.Sprintf("%v: %s appeared while this run worked (another run wrote it first)", ErrTarget, e.path)
}

func (e *existsError) Is(target error) bool {
	return target == ErrExists || target == ErrTarget || target == fs.ErrExist
}

// Mode says whether a write may replace a file at its target.
type Mode int

const (
	// New publishes a file only where none exists at the moment it is
	// published: of concurrent writes to one path that does not exist,
	// exactly one succeeds and the others fail with an error wrapping
	// ErrExists, their temporary files removed. It is the zero Mode.
	New Mode = iota
	// Replace renames the file over a regular file at the target.
	Replace
)

// tempPrefix starts the names of the temporary files Write creates.
const tempPrefix = ".stabpriv-tmp-"

// maxKey is the longest target base name a temporary file's name holds
// as it is: the name adds at most 14 + 1 + 10 + 1 + 8 + 1 + 10 = 45 bytes
// (the prefix, a PID of up to 10 digits, the host, the random part), and
// 200 + 45 leaves room under the 255 bytes of NAME_MAX.
const maxKey = 200

// StaleAge is how long a temporary file of a target must have gone
// unmodified before Check removes it whatever its writer: a writer that
// is alive writes its temporary file and publishes it within seconds.
const StaleAge = 24 * time.Hour

// tempKey returns the part of a temporary file's name that stands for the
// target's base name: base itself when it is at most maxKey bytes, else
// its first bytes (cut at a character boundary), "~" and 16 hexadecimal
// digits of its SHA-256.
func tempKey(base string) string {
	if len(base) <= maxKey {
		return base
	}
	sum := sha256.Sum256([]byte(base))
	cut := maxKey - 17
	for cut > 0 && !utf8.RuneStart(base[cut]) {
		cut--
	}
	return base[:cut] + "~" + hex.EncodeToString(sum[:8])
}

// host is a tag of this machine's name, for the temporary files' names:
// the liveness of a process is known only on its machine (a directory may
// be shared over the network).
var host = sync.OnceValue(func() string {
	name, _ := os.Hostname()
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%08x", h.Sum32())
})

// tempPattern returns the os.CreateTemp pattern of the temporary files of
// the target path: .stabpriv-tmp-KEY-PID.HOST-*.
func tempPattern(path string) string {
	return tempPrefix + tempKey(filepath.Base(path)) + "-" + strconv.Itoa(os.Getpid()) + "." + host() + "-*"
}

// tempOwner parses the base name of a temporary file of the target base
// name: its writer's PID and host, and ok when name has exactly the form
// .stabpriv-tmp-KEY-PID.HOST-N for that target (a temporary file of
// another target never has it: its KEY adds a "-" and more).
func tempOwner(name, base string) (pid int, hostTag string, ok bool) {
	rest, found := strings.CutPrefix(name, tempPrefix+tempKey(base)+"-")
	if !found || strings.Count(rest, "-") != 1 {
		return 0, "", false
	}
	owner, random, _ := strings.Cut(rest, "-")
	p, h, found := strings.Cut(owner, ".")
	if !found || !digits(p) || !digits(random) || len(h) != 8 {
		return 0, "", false
	}
	pid, err := strconv.Atoi(p)
	return pid, h, err == nil
}

// digits reports whether s is a non-empty string of ASCII digits.
func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// removeStale removes the temporary files of the target path that no live
// writer holds: a writer of this machine that no longer runs (alive), or
// none modified for StaleAge. Errors are ignored: a file that stays is
// only clutter, and the next run tries again.
func removeStale(path string) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, h, ok := tempOwner(e.Name(), base)
		if !ok || pid == os.Getpid() && h == host() {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if h == host() && !alive(pid) || time.Since(info.ModTime()) > StaleAge {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// Check returns an error wrapping ErrTarget when path exists and is not a
// regular file (a symbolic link is refused whatever it points to) or its
// name is too long for the system, and an error when its directory does
// not exist or cannot hold a new file. It creates and removes a temporary
// file of the name Write would give it, so that a path Check accepts has
// room for its temporary files, and it removes the temporary files of
// path that killed writers left (see the package documentation). It
// writes nothing that remains: a command checks its outputs with it before
// any work.
func Check(path string) error {
	if path == "" {
		return fmt.Errorf("%w: no path", ErrTarget)
	}
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, syscall.ENAMETOOLONG) && len(filepath.Base(path)) > 255:
		return fmt.Errorf("%w: %s: the file name is %d bytes, above the 255 a name may have; give a shorter one", ErrTarget, clip(path), len(filepath.Base(path)))
	case errors.Is(err, syscall.ENAMETOOLONG):
		return fmt.Errorf("%w: %s: the path is %d bytes, too long for the system; give a shorter one", ErrTarget, clip(path), len(path))
	case err == nil && !st.Mode().IsRegular():
		return fmt.Errorf("%w: %s exists and is not a regular file (%s); give the path of a new or regular file", ErrTarget, path, kind(st.Mode()))
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, tempPattern(path))
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return err
	}
	removeStale(path)
	return nil
}

// clip returns path, or its first 60 bytes (at a character boundary) and
// "..." when it is longer, for a message about its length.
func clip(path string) string {
	if len(path) <= 60 {
		return path
	}
	cut := 60
	for cut > 0 && !utf8.RuneStart(path[cut]) {
		cut--
	}
	return path[:cut] + "..."
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
// the same directory, which is synced and published at path as mode says
// when write and the close succeed. Otherwise the temporary file is removed
// and path is left as it was. The parent directory must exist.
func Write(path string, perm fs.FileMode, mode Mode, write func(io.Writer) error) error {
	return WriteAll([]File{{Path: path, Perm: perm, Mode: mode, Write: write}})
}

// File is one file of WriteAll: its path, permissions, mode and contents.
type File struct {
	Path  string
	Perm  fs.FileMode
	Mode  Mode
	Write func(io.Writer) error
}

// WriteAll writes several files as Write writes one, so that a failure
// leaves every target as it was: every target is checked and written to a
// temporary file first, and the temporary files are published only when
// all of them were written, in order. When a New file cannot be published
// (its target appeared), the New files already published by this call are
// removed again (if they are still the files it published), so that of
// concurrent WriteAll calls to the same new paths in the same order, one
// writes them all and the others none. (A Replace file published before a
// later one fails stays replaced, as does one whose rename fails after
// others succeeded, which needs the directory to change under the
// process.)
func WriteAll(files []File) (err error) {
	for _, f := range files {
		if err := Check(f.Path); err != nil {
			return err
		}
		if _, err := os.Lstat(f.Path); err == nil && f.Mode == New {
			return &existsError{path: f.Path}
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
	return publishAll(files, tmps)
}

// publishAll publishes the temporary files tmps at the targets of files,
// unless Abandon removed them: the publication and Abandon exclude each
// other, so that a process exiting on a signal knows what it published.
func publishAll(files []File, tmps []string) error {
	temps.Lock()
	defer temps.Unlock()
	type published struct {
		path string
		info fs.FileInfo
	}
	var news []published
	undo := func() {
		for _, p := range news {
			if st, err := os.Lstat(p.path); err == nil && os.SameFile(st, p.info) {
				os.Remove(p.path)
			}
		}
	}
	for i, f := range files {
		if !temps.names[tmps[i]] {
			undo()
			return fmt.Errorf("safefile: %s: the write was abandoned", f.Path)
		}
		if err := Check(f.Path); err != nil {
			undo()
			return err
		}
		info, err := os.Lstat(tmps[i])
		if err != nil {
			undo()
			return err
		}
		if f.Mode == Replace {
			err = os.Rename(tmps[i], f.Path)
		} else {
			err = publishNew(tmps[i], f.Path)
		}
		if err != nil {
			undo()
			if errors.Is(err, fs.ErrExist) {
				return &existsError{path: f.Path, appeared: true}
			}
			return err
		}
		if f.Mode == New {
			news = append(news, published{f.Path, info})
		}
	}
	for _, f := range files {
		temps.published = append(temps.published, f.Path)
	}
	return nil
}

// linkNew publishes tmp at path by a hard link, which fails when path
// exists, and removes tmp: New where renaming without replacing is not
// supported. A file system with neither cannot publish without risking a
// replaced file, so the error says so.
func linkNew(tmp, path string) error {
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return fmt.Errorf("safefile: cannot publish %s without replacing a file: no rename without replacing, no hard links: %w", path, err)
	}
	return os.Remove(tmp)
}

// temps are the temporary files of the writes in progress, for Abandon,
// and the targets published, which Abandon returns.
var temps struct {
	sync.Mutex
	names     map[string]bool
	published []string
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
// process about to exit in the middle of them (a signal): their targets
// stay as they were, and no write publishes anything after Abandon
// returns. It returns the targets that the process's writes have published
// so far (those of a WriteAll published whole before Abandon began among
// them), so that the process can say what it leaves.
func Abandon() (published []string) {
	temps.Lock()
	defer temps.Unlock()
	for name := range temps.names {
		os.Remove(name)
	}
	clear(temps.names)
	return append([]string(nil), temps.published...)
}

// writeTemp writes f to a new temporary file in its directory, synced and
// closed, and returns its name (also on error, when it was created).
func writeTemp(f File) (string, error) {
	tf, err := os.CreateTemp(filepath.Dir(f.Path), tempPattern(f.Path))
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
func WriteBytes(path string, perm fs.FileMode, mode Mode, data []byte) error {
	return Write(path, perm, mode, func(w io.Writer) error {
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
