// Package libsvm reads the LibSVM / SVMlight sparse text format into a
// datasets.Dataset: one example a line, "label index:value ...". It is a
// file format of its own, apart from the CSV tables of package datasets;
// errors wrap ErrFormat, which wraps datasets.ErrFormat.
package libsvm
