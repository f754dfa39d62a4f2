package rawcsv

import (
	"math"
	"strconv"

	"github.com/stabpriv/stabpriv/internal/check"
)

// Kind says what a cell holds.
type Kind uint8

const (
	// Number: a finite number written as strconv.FormatFloat(v, 'f', -1,
	// 64) writes it (the shortest decimal that reads back as v, without
	// an exponent): the value gives back the text.
	Number Kind = iota
	// Spelled: a finite number written another way ("1.0", "+1", "1e3",
	// "0.10"); its text is kept.
	Spelled
	// Text: not a finite number (a class name, an empty cell, "NaN").
	Text
)

// ParseCell returns the value of cell s (NaN unless it is a finite number,
// check.ParseFinite deciding) and its kind.
func ParseCell(s string) (float64, Kind) {
	v, k, n := ScanNumber(s)
	switch n {
	case len(s):
		return v, k
	case noDigits:
		// strconv.ParseFloat reads no finite number without a digit
		// before an exponent or the end ("inf" and "nan" are not finite).
		return math.NaN(), Text
	}
	return parseSlow(s)
}

// The lengths ScanNumber returns when it reads no number.
const (
	noDigits = -2 // no digit where the number starts: no finite number
	slowPath = -1 // a number beyond the fast path, or none: ask ParseFloat
)

// ScanNumber reads the number at the start of s: a plain decimal
// [+-]digits[.digits][e[+-]digits] with at most 19 significant digits
// whose value is m * 10^e with m < 2^53 and |e| <= 22. It returns its
// value, its kind and its length in bytes, or a length noDigits or
// slowPath. The value is m * 10^e or m / 10^-e, both operands exact, so one
// rounding gives the correctly rounded result that strconv.ParseFloat
// gives (Clinger's fast path, which ParseFloat also takes). A decimal
// -?(0|[1-9][0-9]*)(.[0-9]*[1-9])? with at most 15 significant digits is
// the shortest that reads back as its value (two decimals of 15 digits
// read as distinct float64 values), so it is a number without being
// formatted again.
func ScanNumber(s string) (float64, Kind, int) {
	i, neg, plain := 0, false, true
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		plain = neg
		i++
	}
	// mant collects the digits from the first that is not 0; past 19 of
	// them it wraps, and the count sends the cell to the slow path.
	var mant uint64
	start := i
	for i < len(s) && s[i] == '0' {
		i++
	}
	sig := i
	for ; i < len(s) && s[i]-'0' <= 9; i++ {
		mant = mant*10 + uint64(s[i]-'0')
	}
	digits, intDigits := i-sig, i-start
	if intDigits == 0 || intDigits > 1 && s[start] == '0' {
		plain = false
	}
	exp, fracDigits := 0, 0
	if i < len(s) && s[i] == '.' {
		i++
		f := i
		if mant == 0 {
			for i < len(s) && s[i] == '0' {
				i++
			}
		}
		sig := i
		for ; i < len(s) && s[i]-'0' <= 9; i++ {
			mant = mant*10 + uint64(s[i]-'0')
		}
		digits += i - sig
		fracDigits = i - f
		exp = -fracDigits
		if fracDigits == 0 || s[i-1] == '0' {
			plain = false
		}
	}
	if intDigits+fracDigits == 0 {
		return 0, Text, noDigits
	}
	if digits > 19 {
		return 0, Text, slowPath
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		plain = false
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		e, ed := 0, 0
		for ; i < len(s) && s[i]-'0' <= 9 && ed < 4; i++ {
			e = e*10 + int(s[i]-'0')
			ed++
		}
		if ed == 0 || ed == 4 {
			return 0, Text, slowPath
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if mant >= 1<<53 || exp < -22 || exp > 22 {
		return 0, Text, slowPath
	}
	v := float64(mant)
	if exp >= 0 {
		v *= pow10[exp]
	} else {
		v /= pow10[-exp]
	}
	if neg {
		v = -v
	}
	switch {
	case !plain:
		return v, Spelled, i
	case digits <= 15:
		return v, Number, i
	}
	return v, kindOf(s[:i], v), i
}

// parseSlow is ParseCell by strconv.ParseFloat.
func parseSlow(s string) (float64, Kind) {
	v, ok := check.ParseFinite(s)
	if !ok {
		return math.NaN(), Text
	}
	return v, kindOf(s, v)
}

// kindOf returns number if s is the text strconv.FormatFloat(v, 'f', -1,
// 64) gives, and spelled otherwise.
func kindOf(s string, v float64) Kind {
	var buf [32]byte
	if string(strconv.AppendFloat(buf[:0], v, 'f', -1, 64)) == s {
		return Number
	}
	return Spelled
}

// ParseFinite returns check.ParseFinite(s) by ParseCell.
func ParseFinite(s string) (float64, bool) {
	v, k := ParseCell(s)
	return v, k != Text
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}
