package main

import "github.com/stabpriv/stabpriv/internal/outfile"

// Replacing an output: whether a command may replace an existing file at
// its output path (internal/outfile, shared with stabpriv-beam).
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
