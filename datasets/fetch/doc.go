// Package fetch downloads data files into a local cache, verified by their
// SHA-256, and extracts members of zip and tar.gz archives.
//
// It is a package of its own because it is the only part of the data
// layer that touches the network and archives: a program that reads a CSV
// file or trains on a data set in memory does not link an HTTP client, and
// the loaders of datasets and datasets/paper never reach the network (they
// read a directory given by the caller). Fetching is opt-in, for users who
// are online; the canonical sources of the paper's data sets, with their
// recorded sums, live in datasets/paper next to their loaders.
//
// File returns the path of a verified local copy of a URL: a cached file
// with the expected sum is returned without a request; otherwise the bytes
// are downloaded into a temporary file, checked, and renamed into place, so
// File never returns the path of unverified bytes and leaves no partial
// file behind. There is no way to download without a sum. ExtractZip and
// ExtractTarGz write selected regular members atomically and refuse a
// member whose name would escape the destination (ErrUnsafePath).
//
// Errors wrap datasets.ErrFormat (bad content: ErrChecksum, ErrUnsafePath)
// or datasets.ErrInvalid (bad arguments: ErrNoChecksum, ErrConfig); the
// package imports neither datasets nor gonum.
package fetch
