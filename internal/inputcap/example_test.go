package inputcap_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/stabpriv/stabpriv/internal/inputcap"
)

// A reader of a small input states its caps and reads through them: a
// line of junk is refused once it passes the line cap.
func Example() {
	caps := inputcap.Caps{Kind: "bounds file", Bytes: 1 << 20, Line: 16, Lines: 100}
	in := "column,lo,hi\nage,0,120\n" + strings.Repeat("\x00", 1000)
	_, err := io.ReadAll(inputcap.NewReader(strings.NewReader(in), caps))
	fmt.Println(err)
	// Output: line 3 is longer than 16 bytes, the most a line of a bounds file may hold: is it the right file?
}
