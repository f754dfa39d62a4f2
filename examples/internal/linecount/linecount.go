// Package linecount counts the lines of user code that an example program
// marks, so that each example's test holds it to the line count its
// documentation states.
package linecount

import (
	"fmt"
	"os"
	"strings"
)

// Begin and End mark the user's code in an example's source: the lines
// strictly between a line holding Begin and the next holding End.
const (
	Begin = "// user code: begin"
	End   = "// user code: end"
)

// Count returns the number of lines between the markers of the file at
// path that are neither blank nor comments. An unreadable file, or a file
// without both markers in order, is an error.
func Count(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	in, n, done := false, 0, false
	for _, line := range strings.Split(string(b), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == Begin:
			in = true
		case t == End && in:
			in, done = false, true
		case in && t != "" && !strings.HasPrefix(t, "//"):
			n++
		}
	}
	if !done {
		return 0, fmt.Errorf("linecount: %s has no %q ... %q block", path, Begin, End)
	}
	return n, nil
}
