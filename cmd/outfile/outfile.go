package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/internal/safefile"
	"github.com/stabpriv/stabpriv/modelfile"
)

// Replace says whether a command may replace an existing file at its
// output path.
type Replace int

const (
	// Keep replaces no file.
	Keep Replace = iota
	// NotModels replaces a file that is not a model file (--force of
	// predict).
	NotModels
	// AnyFile replaces any regular file (--force of train and
	// stabpriv-beam).
	AnyFile
)

// usagef is runflags.Usagef.
var usagef = runflags.Usagef

// CheckFile makes sure, before any work, that the output file path of
// the flag can be written: a path that looks like a URL (urlScheme) is
// refused, since the commands of stabpriv write local files only (the
// system would take "s3://b/m.json" for the local path s3:/b/m.json); a
// path that is one of the command's inputs is
// refused whatever rep says; a path that exists is refused unless rep
// allows replacing it (a model file is replaced only by AnyFile), and one
// that is not a regular file always. The parent directory must exist or be
// creatable; it is created only when the command writes. An empty path is
// accepted (no output); "-", standard output to a user, is refused (a
// command that writes there handles it before CheckFile).
func CheckFile(flag, path string, rep Replace, inputs ...string) error {
	if path == "" {
		return nil
	}
	if path == "-" {
		return usagef("%s -: this command writes its file to a path, not to standard output; give a path (./- for a file named -)", flag)
	}
	if err := checkURL(flag, path); err != nil {
		return err
	}
	if err := checkDotDot(flag, path); err != nil {
		return err
	}
	if err := checkExisting(flag, path, rep, inputs); err != nil {
		return err
	}
	return checkTarget(flag, filepath.Dir(path), path)
}

// CheckDir makes sure, before any work, that the files names can be
// written into the output directory dir of the flag: dir is not a URL
// (urlScheme), is a directory or
// can be made one, and every target that exists passes CheckFile's rules
// for rep and the command's inputs. Nothing is created.
func CheckDir(flag, dir string, rep Replace, inputs []string, names ...string) error {
	if dir == "" {
		return usagef("%s DIR is required", flag)
	}
	if dir == "-" {
		return usagef("%s -: this command writes files into a directory, not to standard output; give a directory (./- for one named -)", flag)
	}
	if err := checkURL(flag, dir); err != nil {
		return err
	}
	if err := checkDotDot(flag, dir); err != nil {
		return err
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return usagef("%s %s is a file; give a directory", flag, dir)
	}
	for _, name := range names {
		p := filepath.Join(dir, name)
		if err := checkExisting(flag, p, rep, inputs); err != nil {
			return err
		}
		if err := checkTarget(flag, dir, p); err != nil {
			return err
		}
	}
	return nil
}

// urlScheme returns the scheme of path when path begins the way a URL
// with an authority does, "scheme://" with scheme a letter followed by letters,
// digits, "+", "-" or "." (RFC 3986, section 3.1), or as a file URI
// without one does ("file:/x", RFC 8089, in any case), and "" otherwise.
func urlScheme(path string) string {
	if len(path) > len("file:/") && strings.EqualFold(path[:len("file:/")], "file:/") {
		return path[:len("file")]
	}
	scheme, _, ok := strings.Cut(path, "://")
	if !ok || scheme == "" {
		return ""
	}
	for i, r := range scheme {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
		case i > 0 && ('0' <= r && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return ""
		}
	}
	return scheme
}

// checkURL refuses a path that looks like a URL (urlScheme): the commands
// of stabpriv write local files only.
func checkURL(flag, path string) error {
	if scheme := urlScheme(path); scheme != "" {
		return usagef("%s %s is a URL (scheme %s): stabpriv writes local files only (stabpriv-beam writes gs://, s3://)", flag, path, scheme)
	}
	return nil
}

// checkExisting applies CheckFile's rules to a target path that exists:
// never one of the inputs, a model file only with AnyFile, another regular
// file only with NotModels or AnyFile. A path that does not exist passes.
func checkExisting(flag, path string, rep Replace, inputs []string) error {
	st, err := os.Stat(path)
	if err != nil {
		return nil
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
			return usagef("%s %s is also an input of the command (%s); give another path", flag, path, in)
		}
	}
	switch model := modelfile.IsModelFile(path); {
	case model && rep == NotModels:
		return usagef("%s %s is a model file; give another path (this command never replaces a model file; train --force does)", flag, path)
	case model && rep == Keep:
		return usagef("%s %s is a model file; give a new path (or --force to replace it)", flag, path)
	case !model && rep == Keep && st.Mode().IsRegular():
		return usagef("%s %s exists; give a new path (or --force to replace it)", flag, path)
	}
	return nil
}

// checkDotDot refuses a path with a ".." element after a directory that
// does not exist: the system resolves such a path through the missing
// directory and fails, while its lexical form names another file (an
// input, perhaps), so no check before the work could stand for the write.
func checkDotDot(flag, path string) error {
	prefix := ""
	for _, el := range strings.Split(filepath.ToSlash(path), "/") {
		if el == ".." && prefix != "" {
			st, err := os.Lstat(prefix)
			switch {
			case err != nil:
				return usagef("%s %s: %s does not exist, so the .. after it cannot be resolved; give the path without ..", flag, path, prefix)
			case st.Mode()&fs.ModeSymlink != 0:
				// The system resolves .. from the link's target, the
				// checks and the directories made for the write from
				// the text: they would name different places.
				return usagef("%s %s: %s is a symbolic link, and .. after it leaves its target, not %s; give the path without ..", flag, path, prefix, filepath.Dir(prefix))
			}
		}
		switch {
		case prefix == "" && el == "":
			prefix = "/"
		case prefix == "" || prefix == "/":
			prefix += el
		default:
			prefix += "/" + el
		}
	}
	return nil
}

// checkTarget checks the target path in dir: refused (a usage error) when
// it exists and is not a regular file, or when the nearest existing
// ancestor of dir cannot hold a new file.
func checkTarget(flag, dir, path string) error {
	existing := dir
	for {
		st, err := os.Stat(existing)
		if err == nil {
			if !st.IsDir() {
				return usagef("%s: %s is not a directory", flag, existing)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(existing) == existing {
			return usagef("%s: %w", flag, err) // not a directory, no permission: a refused path
		}
		existing = filepath.Dir(existing)
	}
	if existing != dir {
		// The directory will be created: its nearest existing ancestor
		// must be able to hold a new entry.
		path = filepath.Join(existing, fmt.Sprintf(".stabpriv-probe-%d", os.Getpid()))
	}
	if err := safefile.Check(path); err != nil {
		return usagef("%s: %w", flag, err)
	}
	return nil
}
