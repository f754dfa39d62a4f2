package safefile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames old to new unless new exists (renameat2 with
// RENAME_NOREPLACE). A variable for the tests, which make it unsupported.
var renameNoReplace = func(old, new string) error {
	return unix.Renameat2(unix.AT_FDCWD, old, unix.AT_FDCWD, new, unix.RENAME_NOREPLACE)
}

// publishNew publishes tmp at path unless path exists (an error wrapping
// fs.ErrExist then): by renameat2's RENAME_NOREPLACE, or by a hard link
// where the kernel or the file system does not support the flag (EINVAL,
// ENOSYS, EOPNOTSUPP).
func publishNew(tmp, path string) error {
	err := renameNoReplace(tmp, path)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		return linkNew(tmp, path)
	}
	return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err}
}
