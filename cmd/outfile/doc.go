// Package outfile checks, before any work, the output paths of the
// commands (stabpriv and stabpriv-beam): an output never replaces one of
// the command's inputs, replaces an existing file only when the command's
// --force allows it, and is never anything but a regular file. Refusals are
// usage errors (runflags.UsageError): the commands exit with status 2.
//
// It is the commands' shared code, not part of the library: it sits under
// cmd/ beside them (an ordinary package, not cmd/internal, so that
// beam/cmd/stabpriv-beam can import it).
package outfile
