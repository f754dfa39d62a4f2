package main

import (
	"errors"

	"github.com/stabpriv/stabpriv/cmd/outfile"
	"github.com/stabpriv/stabpriv/internal/safefile"
)

// Replacing an output: whether a command may replace an existing file at
// its output path (cmd/outfile, shared with stabpriv-beam).
type replace = outfile.Replace

const (
	keep      = outfile.Keep      // no file is replaced
	notModels = outfile.NotModels // a file that is not a model file is replaced (--force of predict)
	anyFile   = outfile.AnyFile   // any regular file is replaced (--force of train)
)

// checkOutFile is outfile.CheckFile: before any work, an output path that
// is not an input, and replaces an existing file only as rep allows.
var checkOutFile = outfile.CheckFile

// checkOutDir is outfile.CheckDir.
var checkOutDir = outfile.CheckDir

// outputError makes the refusal of an output target found when it is
// written (safefile.ErrTarget: another run published it first, or it
// became a directory, a link, ...) the usage error that the same refusal
// before the work is (exit 2), naming the flag and, for a file another
// run wrote, what to do. Other errors are returned as they are.
func outputError(flag string, err error) error {
	switch {
	case errors.Is(err, safefile.ErrExists):
		return usagef("%s: %w; nothing written: give a new path, or --force to replace it", flag, err)
	case errors.Is(err, safefile.ErrTarget):
		return usagef("%s: %w", flag, err)
	}
	return err
}

// writeMode is the safefile.Mode of an output: Replace with --force, New
// (never replace a file, even one another run wrote meanwhile) without.
func writeMode(force bool) safefile.Mode {
	if force {
		return safefile.Replace
	}
	return safefile.New
}

// checkNotEmpty refuses an output flag given with an empty value (a shell
// variable that expanded to nothing, say), which would otherwise make the
// command write nothing without a word; set names the flags given.
func checkNotEmpty(set map[string]bool, name, value, without string) error {
	if set[name] && value == "" {
		return usagef("--%s is empty: give a path, or leave --%s out (%s)", name, name, without)
	}
	return nil
}
