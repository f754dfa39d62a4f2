package interrupt

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/stabpriv/stabpriv/internal/proctest"
)

// TestError: the cause of a stop names the signal, matches
// context.Canceled and gives 128 plus the signal's number.
func TestError(t *testing.T) {
	for _, c := range proctest.Stops {
		var sig os.Signal = c.Signal
		if c.Signal == syscall.SIGINT {
			sig = os.Interrupt // what signal.Notify delivers
		}
		e := &Error{sig}
		if msg := "interrupted by " + c.Name; e.Error() != msg || e.Status() != c.Status || !errors.Is(e, context.Canceled) {
			t.Errorf("%v: %q, status %d, want %q, %d, and context.Canceled", c.Signal, e.Error(), e.Status(), msg, c.Status)
		}
	}
}
