package main

import (
	"github.com/stabpriv/stabpriv/cmd/outfile"
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

// outputError is outfile.Error: a refusal of the target found when it is
// written is a usage error naming the flag.
var outputError = outfile.Error

// checkNotEmpty refuses an output flag given with an empty value (a shell
// variable that expanded to nothing, say), which would otherwise make the
// command write nothing without a word; set names the flags given.
func checkNotEmpty(set map[string]bool, name, value, without string) error {
	if set[name] && value == "" {
		return usagef("--%s is empty: give a path, or leave --%s out (%s)", name, name, without)
	}
	return nil
}
