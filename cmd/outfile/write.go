package outfile

import (
	"errors"
	"io"

	"github.com/stabpriv/stabpriv/cmd/runflags"
	"github.com/stabpriv/stabpriv/internal/safefile"
)

// Error makes the refusal of an output target found when it is written
// (safefile.ErrTarget: another run published it first, or it became a
// directory, a link, ...) the usage error that the same refusal before the
// work is (exit 2), naming the flag and, for a file another run wrote,
// what to do. Other errors are returned as they are.
func Error(flag string, err error) error {
	switch {
	case errors.Is(err, safefile.ErrExists):
		return runflags.Usagef("%s: %w; nothing written: give a new path, or --force to replace it", flag, err)
	case errors.Is(err, safefile.ErrTarget):
		return runflags.Usagef("%s: %w", flag, err)
	}
	return err
}

// Mode is the safefile.Mode of an output: Replace with --force, New
// (never replace a file, even one another run wrote meanwhile) without.
func Mode(force bool) safefile.Mode {
	if force {
		return safefile.Replace
	}
	return safefile.New
}

// Write writes the output file at path, readable by all, whole or not at
// all (safefile.Write), with the Mode of force: an existing file is
// replaced only with force.
func Write(path string, force bool, write func(io.Writer) error) error {
	return safefile.Write(path, 0o644, Mode(force), write)
}
