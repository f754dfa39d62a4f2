package publish

import "github.com/stabpriv/stabpriv/internal/safefile"

// IsSummaryFile reports whether path is a regular file that begins like a
// summary file (IsSummary of its first 256 bytes): stabpriv certify tells
// a summary from a model file by it. A path that is missing, not a regular
// file or unreadable is not one.
func IsSummaryFile(path string) bool {
	return IsSummary(safefile.Head(path, 256))
}
