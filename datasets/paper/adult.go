package paper

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/categorical"
	"github.com/stabpriv/stabpriv/internal/check"
)

// ErrAdultFormat is returned (wrapped, with the file and line) for a
// malformed record of the UCI Adult files. It wraps datasets.ErrFormat.
var ErrAdultFormat = fmt.Errorf("%w: Adult record", datasets.ErrFormat)

// Names of the UCI Adult files LoadAdult reads from its directory.
const (
	AdultTrainFile = "adult.data"
	AdultTestFile  = "adult.test"
)

// Adult class names: Classes[0] is label -1, Classes[1] is label +1.
const (
	AdultNegative = "<=50K"
	AdultPositive = ">50K"
)

// adultColumns names the 14 attributes of a record, in file order.
var adultColumns = [adultFields - 1]string{
	"age", "workclass", "fnlwgt", "education", "education-num",
	"marital-status", "occupation", "relationship", "race", "sex",
	"capital-gain", "capital-loss", "hours-per-week", "native-country",
}

// adultNumeric marks the continuous attributes, kept as they are.
var adultNumeric = [adultFields - 1]bool{0: true, 2: true, 4: true, 10: true, 11: true, 12: true}

const (
	adultFields      = 15 // 14 attributes and the label
	adultNumericCols = 6
	adultCatCols     = 8
	adultMissing     = "?"
)

// AdultOptions configures LoadAdult and LoadAdultSplit. The zero value is the
// stability-privacy paper's protocol: rows with a missing value dropped.
type AdultOptions struct {
	// KeepMissing keeps the rows that have a missing value ('?'); the missing
	// value becomes a category "?" of its (categorical) column. The default,
	// false, drops those rows: 45,222 of 48,842 remain.
	KeepMissing bool
}

// adultRecord is one parsed line of adult.data or adult.test.
type adultRecord struct {
	num        [adultNumericCols]float64
	cat        [adultCatCols]string
	positive   bool
	missing    bool   // some attribute was '?'
	missingNum string // name of a numeric attribute that was '?'
}

// parseAdultLine parses one record: 15 comma-separated fields, spaces
// around them trimmed, the label "<=50K" or ">50K" with an optional trailing
// '.' (as in adult.test). A '?' in a categorical attribute sets missing; a
// numeric attribute must be a finite number or '?'.
func parseAdultLine(line string) (adultRecord, error) {
	var r adultRecord
	fields := strings.Split(line, ",")
	if len(fields) != adultFields {
		return r, fmt.Errorf("%w: %d fields, want %d", ErrAdultFormat, len(fields), adultFields)
	}
	ni, ci := 0, 0
	for j, f := range fields[:adultFields-1] {
		f = strings.TrimSpace(f)
		if f == adultMissing {
			r.missing = true
		}
		if adultNumeric[j] {
			if f != adultMissing {
				v, ok := check.ParseFinite(f)
				if !ok {
					return r, fmt.Errorf("%w: %s is %q, not a finite number", ErrAdultFormat, adultColumns[j], f)
				}
				r.num[ni] = v
			} else if r.missingNum == "" {
				r.missingNum = adultColumns[j]
			}
			ni++
			continue
		}
		if f == "" {
			return r, fmt.Errorf("%w: %s is empty", ErrAdultFormat, adultColumns[j])
		}
		r.cat[ci] = f
		ci++
	}
	label := strings.TrimSuffix(strings.TrimSpace(fields[adultFields-1]), ".")
	switch label {
	case AdultPositive:
		r.positive = true
	case AdultNegative:
	default:
		return r, fmt.Errorf("%w: label %q, want %q or %q", ErrAdultFormat, label, AdultNegative, AdultPositive)
	}
	return r, nil
}

// adultPart is the parsed content of one Adult file.
type adultPart struct {
	name    string
	records []adultRecord
	read    int // records in the file, before dropping
}

// readAdult reads the records of one Adult file. Blank lines and lines that
// start with '|' (the UCI comment marker, as in adult.test's first line) are
// skipped. Records with a missing value are dropped unless keepMissing; a
// record with a missing numeric value is an error when kept.
func readAdult(r io.Reader, name string, keepMissing bool) (adultPart, error) {
	p := adultPart{name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "|") {
			continue
		}
		rec, err := parseAdultLine(text)
		if err != nil {
			return p, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		p.read++
		if rec.missing {
			if !keepMissing {
				continue
			}
			if rec.missingNum != "" {
				return p, fmt.Errorf("%s:%d: %w: numeric %s is missing", name, line, ErrAdultFormat, rec.missingNum)
			}
		}
		p.records = append(p.records, rec)
	}
	if err := sc.Err(); err != nil {
		return p, fmt.Errorf("%w: reading %s: %w", ErrAdultFormat, name, err)
	}
	return p, nil
}

// LoadAdult reads adult.data and adult.test from dir and returns them
// concatenated (adult.data's rows first), the layout of the stability-privacy
// paper's protocol, which then draws its own 80/20 splits. See LoadAdultSplit
// for the encoding.
func LoadAdult(dir string, opts AdultOptions) (*datasets.Dataset, error) {
	parts, err := loadAdultParts(dir, opts)
	if err != nil {
		return nil, err
	}
	return buildAdult(parts, opts)
}

// LoadAdultSplit reads adult.data and adult.test from dir and returns them as
// two data sets with the same columns (UCI's own train/test split).
//
// The encoding: the six numeric attributes (age, fnlwgt, education-num,
// capital-gain, capital-loss, hours-per-week) are kept as they are, first, in
// that order; the eight categorical attributes follow one-hot encoded
// (categorical.OneHotEncoder: sorted categories, fitted on both files together, all
// categories kept). Labels: >50K is +1, <=50K is -1, Classes is
// {"<=50K", ">50K"}. No scaling is done: standardize and clip rows to the
// unit ball downstream.
func LoadAdultSplit(dir string, opts AdultOptions) (train, test *datasets.Dataset, err error) {
	parts, err := loadAdultParts(dir, opts)
	if err != nil {
		return nil, nil, err
	}
	train, err = buildAdult(parts[:1], opts, parts...)
	if err != nil {
		return nil, nil, err
	}
	test, err = buildAdult(parts[1:], opts, parts...)
	if err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

func loadAdultParts(dir string, opts AdultOptions) ([]adultPart, error) {
	parts := make([]adultPart, 0, 2)
	for _, name := range []string{AdultTrainFile, AdultTestFile} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("paper: Adult: %w", err)
		}
		p, err := readAdult(f, name, opts.KeepMissing)
		f.Close()
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// buildAdult encodes the records of parts into one data set. The one-hot
// encoder is fitted on fitParts (all of parts when none is given).
func buildAdult(parts []adultPart, opts AdultOptions, fitParts ...adultPart) (*datasets.Dataset, error) {
	if len(fitParts) == 0 {
		fitParts = parts
	}
	var catNames []string
	var numNames []string
	for j, name := range adultColumns {
		if adultNumeric[j] {
			numNames = append(numNames, name)
		} else {
			catNames = append(catNames, name)
		}
	}
	var catRows [][]string
	for _, p := range fitParts {
		for i := range p.records {
			catRows = append(catRows, p.records[i].cat[:])
		}
	}
	enc, err := categorical.FitOneHot(catNames, catRows)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, p := range parts {
		n += len(p.records)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: no records", ErrAdultFormat)
	}
	d := adultNumericCols + enc.Width()
	x := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	i := 0
	var notes []string
	for _, p := range parts {
		for k := range p.records {
			rec := &p.records[k]
			row := x.RawRowView(i)
			copy(row, rec.num[:])
			if err := enc.Encode(row[adultNumericCols:], rec.cat[:]); err != nil {
				return nil, err
			}
			y[i] = -1
			if rec.positive {
				y[i] = 1
			}
			i++
		}
		if opts.KeepMissing {
			notes = append(notes, fmt.Sprintf("adult: %s: %d records, missing values ('?') kept as a category", p.name, len(p.records)))
		} else {
			notes = append(notes, fmt.Sprintf("adult: %s: %d of %d records kept, %d with a missing value ('?') dropped as in the paper's protocol",
				p.name, len(p.records), p.read, p.read-len(p.records)))
		}
	}
	notes = append(notes, fmt.Sprintf("adult: %d numeric columns as-is, %d categorical columns one-hot (sorted categories fitted on %s and %s together): %d features",
		adultNumericCols, adultCatCols, AdultTrainFile, AdultTestFile, d))
	return &datasets.Dataset{
		X:        x,
		Y:        y,
		Features: append(numNames, enc.FeatureNames()...),
		Classes:  []string{AdultNegative, AdultPositive},
		Notes:    notes,
	}, nil
}

// adult is UCI Adult in the registry.
var adult = DataSet{
	Name:   "adult",
	Title:  "UCI Adult (income > 50K): 45,222 rows without missing values, 6 numeric and 8 one-hot categorical attributes",
	Dir:    "adult",
	Marker: AdultTrainFile,
	Load:   func(dir string) (*datasets.Dataset, error) { return LoadAdult(dir, AdultOptions{}) },
	// 7 values log-spaced from 1e-4 to 1e-2, a third of a decade apart,
	// which brackets the best lambda of every eps in 0.1..5.
	Lambdas: []float64{1e-4, 2.1544e-4, 4.6416e-4, 1e-3, 2.1544e-3, 4.6416e-3, 1e-2},
}
