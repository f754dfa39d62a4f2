package safefile

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNewWithoutRenameNoReplace: where renameat2 does not take
// RENAME_NOREPLACE (EINVAL from the file system, ENOSYS from an old
// kernel), New publishes by a hard link: still exactly one winner.
func TestNewWithoutRenameNoReplace(t *testing.T) {
	saved := renameNoReplace
	defer func() { renameNoReplace = saved }()
	for _, errno := range []error{unix.EINVAL, unix.ENOSYS} {
		renameNoReplace = func(old, new string) error { return errno }
		path := filepath.Join(t.TempDir(), "model.json")
		errs, contents := raceNew(path, 8)
		checkOneWinner(t, path, errs, contents)
	}
}
