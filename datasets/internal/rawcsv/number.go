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
	v, k, _ := ParseDecimals(s)
	return v, k
}

// ParseDecimals is ParseCell that also returns the decimals of s, as
// ScanNumber does: p >= 0 when strconv.FormatFloat(v, 'f', p, 64) writes
// s ("0.500000" has 6, "12" has 0), NoDecimals when it writes no number
// so, MaybeDecimals when only writing v tells.
func ParseDecimals(s string) (float64, Kind, int) {
	v, k, n, p := ScanNumber(s)
	switch n {
	case len(s):
		return v, k, p
	case noDigits:
		// strconv.ParseFloat reads no finite number without a digit
		// before an exponent or the end ("inf" and "nan" are not finite).
		return math.NaN(), Text, NoDecimals
	}
	v, k = parseSlow(s)
	return v, k, MaybeDecimals
}

// The decimals ScanNumber and ParseDecimals report for a number that is
// not written with a number of decimals they can tell from its form.
const (
	// NoDecimals: no strconv.FormatFloat(v, 'f', p, 64) writes the
	// number as it is written (an exponent, a sign +, a leading zero, a
	// point without a digit on either side).
	NoDecimals = -1
	// MaybeDecimals: the form is FormatFloat's, but with more than 15
	// significant digits (or beyond the fast path): writing v tells.
	MaybeDecimals = -2
)

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
// formatted again. The last result is the number's decimals p when it is
// written -?(0|[1-9][0-9]*)(.[0-9]+)? with p digits after the point and at
// most 15 significant digits: strconv.FormatFloat(v, 'f', p, 64) then
// writes it back, trailing zeros and all (the decimal's last digit is at
// least 10^-15 of it, and the float64 nearest it within 2^-53 of it, well
// inside half that digit's unit); MaybeDecimals for that form with more
// digits, NoDecimals for another form or no number.
func ScanNumber(s string) (float64, Kind, int, int) {
	// plain: the shortest decimal's form so far; fixed: the form of
	// FormatFloat with decimals, trailing zeros allowed.
	i, neg, plain := 0, false, true
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		plain = neg
		i++
	}
	fixed := plain
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
		plain, fixed = false, false
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
		if fracDigits == 0 {
			plain, fixed = false, false
		} else if s[i-1] == '0' {
			plain = false
		}
	}
	if intDigits+fracDigits == 0 {
		return 0, Text, noDigits, NoDecimals
	}
	if digits > 19 {
		return 0, Text, slowPath, MaybeDecimals
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		plain, fixed = false, false
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
			return 0, Text, slowPath, MaybeDecimals
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if mant >= 1<<53 || exp < -22 || exp > 22 {
		return 0, Text, slowPath, MaybeDecimals
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
	p := NoDecimals
	switch {
	case fixed && digits <= 15:
		p = fracDigits
	case fixed:
		p = MaybeDecimals
	}
	switch {
	case !plain:
		return v, Spelled, i, p
	case digits <= 15:
		return v, Number, i, p
	}
	return v, kindOf(s[:i], v), i, p
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
