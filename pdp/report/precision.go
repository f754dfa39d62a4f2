package report

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/internal/check"
	"github.com/stabpriv/stabpriv/internal/inputcap"
)

// The caps of a precision file (ReadPrecision), a d x d matrix in CSV (checked as it
// is read, a regular file's size before): room for d of about 1,700 at 20
// bytes an entry.
const (
	// maxPrecisionBytes is the most bytes of the file.
	maxPrecisionBytes = 64 << 20
	// maxPrecisionLines is the most lines (rows) of the file.
	maxPrecisionLines = datasets.MaxColumns
)

// precisionCaps are the caps of a precision file.
var precisionCaps = inputcap.Caps{Kind: "precision matrix", Bytes: maxPrecisionBytes, Line: datasets.MaxLineBytes, Lines: maxPrecisionLines}

// ReadPrecision reads the precision matrix A of a gaussian-cov release
// (RidgeRelease.Precision; stabpriv pdp --precision): a symmetric positive
// definite matrix from a CSV file without a header, d rows of d finite
// numbers, under caps on the file's size, line length and lines. Errors
// name the file.
func ReadPrecision(path string) (*mat.SymDense, error) {
	f, err := inputcap.Open(path, precisionCaps)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a, err := parsePrecision(inputcap.NewReader(f, precisionCaps))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// parsePrecision reads a symmetric positive definite matrix from CSV
// without a header.
func parsePrecision(r io.Reader) (*mat.SymDense, error) {
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	d := len(recs)
	if d == 0 {
		return nil, errors.New("no rows")
	}
	a := mat.NewSymDense(d, nil)
	for i, rec := range recs {
		if len(rec) != d {
			return nil, fmt.Errorf("row %d has %d entries, want %d (a square matrix)", i+1, len(rec), d)
		}
		for j, cell := range rec {
			v, err := strconv.ParseFloat(strings.TrimSpace(cell), 64)
			if err != nil || !check.Finite(v) {
				return nil, fmt.Errorf("row %d, column %d: %q is not a finite number", i+1, j+1, cell)
			}
			if j < i && v != a.At(i, j) {
				return nil, fmt.Errorf("not symmetric: entry (%d, %d) = %v, (%d, %d) = %v", i+1, j+1, v, j+1, i+1, a.At(i, j))
			}
			a.SetSym(i, j, v)
		}
	}
	var c mat.Cholesky
	if !c.Factorize(a) {
		return nil, errors.New("not positive definite")
	}
	return a, nil
}
