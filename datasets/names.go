package datasets

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// errNotUTF8 is wrapped by the error of a name that is not UTF-8.
var errNotUTF8 = errors.New("not UTF-8")

// CheckName returns an error unless name can name a column, a class or a
// category: valid UTF-8 without control characters or bidirectional
// controls (U+202E and its kin, which can make a name display as
// another: unicode.Bidi_Control). It is the one rule
// of names for every input that brings them (the header of a data CSV,
// the bounds and schema files, the declared classes, the shard names) and
// for the model file that holds them (modelfile.Read): a model file holds
// any such name, written and read back byte for byte, so a run whose
// inputs pass never writes a file that its own readers refuse. It does not
// check emptiness or surrounding spaces (the callers' rules do).
func CheckName(name string) error {
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return fmt.Errorf("%s is %w (byte %d is 0x%02x)", quoteName(name), errNotUTF8, i+1, name[i])
		case unicode.IsControl(r):
			return fmt.Errorf("%s holds the control character %U at byte %d", quoteName(name), r, i+1)
		case unicode.Is(unicode.Bidi_Control, r):
			return fmt.Errorf("%s holds the bidirectional control character %U at byte %d, which can make a name display as another", quoteName(name), r, i+1)
		}
		i += size
	}
	return nil
}

// maxQuoted is the longest name quoteName quotes whole.
const maxQuoted = 64

// quoteName quotes name for a message (strconv.Quote); a name longer than
// 64 bytes is quoted by its first 64 and its length.
func quoteName(name string) string {
	if len(name) <= maxQuoted {
		return strconv.Quote(name)
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(name[:maxQuoted]), len(name))
}

// SortClassNames sorts class names in place: numerically when every name is
// a number (so that "9" comes before "10"), byte-wise otherwise. It is the
// order in which the loaders number classes.
func SortClassNames(classes []string) {
	numeric := true
	for _, c := range classes {
		if v, err := strconv.ParseFloat(c, 64); err != nil || v != v {
			numeric = false
			break
		}
	}
	if !numeric {
		sort.Strings(classes)
		return
	}
	sort.Slice(classes, func(a, b int) bool {
		va, _ := strconv.ParseFloat(classes[a], 64)
		vb, _ := strconv.ParseFloat(classes[b], 64)
		if va != vb {
			return va < vb
		}
		return classes[a] < classes[b]
	})
}
