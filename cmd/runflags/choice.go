package runflags

import (
	"encoding"
	"fmt"
)

// textEnum is a typed enum that reads and writes its names.
type textEnum[T any] interface {
	*T
	encoding.TextUnmarshaler
	encoding.TextMarshaler
}

// choice is the value of a flag of the typed enum T (flag.TextVar) that
// also takes a word meaning "not set" (none, auto) and, where the command
// line has its own words for some values, those words.
type choice[T any, P textEnum[T]] struct {
	unset string       // the word for "not set"
	words map[string]T // command-line words for values of T
	v     T
	text  string // what was given
}

// newChoice returns a choice that is not set.
func newChoice[T any, P textEnum[T]](unset string, words map[string]T) *choice[T, P] {
	return &choice[T, P]{unset: unset, words: words, text: unset}
}

func (c *choice[T, P]) MarshalText() ([]byte, error) { return []byte(c.text), nil }

func (c *choice[T, P]) UnmarshalText(text []byte) error {
	s := string(text)
	var v T
	switch w, ok := c.words[s]; {
	case s == c.unset:
	case ok:
		v = w
	default:
		if err := P(&v).UnmarshalText(text); err != nil {
			return fmt.Errorf("%w (or %s)", err, c.unset)
		}
	}
	c.v, c.text = v, s
	return nil
}

// value returns the value and whether one was given.
func (c *choice[T, P]) value() (T, bool) { return c.v, c.text != c.unset }
