// Package rawcsv splits the records of a data CSV and parses its cells:
// the layer under datasets.TableReader. Records splits lines without
// quotes in place and hands the rest of the input to encoding/csv;
// ParseCell reads a cell's number by a fast path that gives the bits of
// strconv.ParseFloat; Texts keeps the text of a column's cells that its
// Spelling of numbers (the shortest decimal, or p decimals) does not give
// back. The caps and the dialect are documented in package datasets.
package rawcsv
