package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/stabpriv/stabpriv/internal/safefile"
	"github.com/stabpriv/stabpriv/modelfile"
)

// checkOutFile makes sure, before any work, that the output file path of
// the flag can be written: a path that exists and is not a regular file is
// refused, and so is a model file unless force (a model file is replaced
// on purpose only). The parent directory must exist or be creatable; it is
// created only when the command writes.
func checkOutFile(flag, path string, force bool) error {
	if path == "" {
		return nil
	}
	if !force && modelfile.IsModelFile(path) {
		return usagef("%s %s is a model file; give another path (or --force to replace it)", flag, path)
	}
	return checkTarget(flag, filepath.Dir(path), path)
}

// checkOutDir makes sure, before any work, that the files names can be
// written into the output directory dir of the flag: dir is a directory or
// can be made one, and no target is anything but a regular file or a model
// file. Nothing is created.
func checkOutDir(flag, dir string, names ...string) error {
	if dir == "" {
		return usagef("%s DIR is required", flag)
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return usagef("%s %s is a file; give a directory", flag, dir)
	}
	for _, name := range names {
		p := filepath.Join(dir, name)
		if modelfile.IsModelFile(p) {
			return usagef("%s: %s is a model file; give another directory", flag, p)
		}
		if err := checkTarget(flag, dir, p); err != nil {
			return err
		}
	}
	return nil
}

// checkTarget checks the target path in dir: refused (a usage error) when
// it exists and is not a regular file; an error when the nearest existing
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
			return fmt.Errorf("%s: %w", flag, err)
		}
		existing = filepath.Dir(existing)
	}
	if existing != dir {
		// The directory will be created: its nearest existing ancestor
		// must be able to hold a new entry.
		path = filepath.Join(existing, fmt.Sprintf(".stabpriv-probe-%d", os.Getpid()))
	}
	err := safefile.Check(path)
	if errors.Is(err, safefile.ErrTarget) {
		return usagef("%s: %w", flag, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return nil
}
