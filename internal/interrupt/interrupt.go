// Package interrupt stops a command cleanly on a signal: SIGINT (Ctrl-C),
// SIGTERM (kill, a job scheduler, a container stopping) or SIGHUP (the
// terminal closed). The first signal cancels the command's context; a
// command that has not stopped after a grace period, or a second signal,
// ends the process: the temporary files of the writes in progress are
// removed (safefile.Abandon), so every output stays whole or absent, a
// line on standard error says which signal stopped it and what was
// written, and the status is 128 plus the signal's number (130, 143, 129),
// as a shell reports a process the signal killed.
package interrupt

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/stabpriv/stabpriv/internal/safefile"
)

// Grace is how long a command may take to stop after a signal before the
// process exits without it.
const Grace = 2 * time.Second

// Signals are the signals that stop a command.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// Error is the cause (context.Cause) of a context cancelled by a signal.
// It matches context.Canceled.
type Error struct{ Signal os.Signal }

func (e *Error) Error() string { return "interrupted by " + Name(e.Signal) }
func (e *Error) Unwrap() error { return context.Canceled }

// Status returns the exit status of a process stopped by the signal: 128
// plus its number.
func (e *Error) Status() int {
	if n, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 128 + int(syscall.SIGINT)
}

// Name names a signal as a user knows it: SIGINT, SIGTERM, SIGHUP.
func Name(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}

// Context returns a context that the first of Signals cancels, its cause
// an *Error. If the command has not ended the process Grace after that
// signal, or at a second one, the process removes the temporary files of
// its writes in progress, writes "prog: interrupted by SIG..., nothing
// written" (or what it wrote) to stderr and exits with the Error's Status.
func Context(parent context.Context, prog string, stderr io.Writer) context.Context {
	ctx, cancel := context.WithCancelCause(parent)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, Signals...)
	go func() {
		stop := &Error{<-sig}
		cancel(stop)
		select {
		case <-sig:
		case <-time.After(Grace):
		}
		done := "nothing written"
		if published := safefile.Abandon(); len(published) > 0 {
			done = "already written: " + strings.Join(published, ", ")
		}
		fmt.Fprintf(stderr, "%s: %v, %s\n", prog, stop, done)
		os.Exit(stop.Status())
	}()
	return ctx
}
